// Loaded with `node --import` into a process the overhead benchmark starts: when the process ends,
// it prints its own peak RSS (the kernel's high-water mark) and CPU time as tagged lines on stderr.
process.on('exit', () => {
  const usage = process.resourceUsage();
  process.stderr.write(`\nsavepoint-bench-peak-rss-kb ${usage.maxRSS}\nsavepoint-bench-cpu-ms ${Math.round((usage.userCPUTime + usage.systemCPUTime) / 1000)}\n`);
});
