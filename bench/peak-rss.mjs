// Loaded with `node --import` into a process the overhead benchmark starts: when the process ends,
// it prints its own peak RSS (the kernel's high-water mark) as one tagged line on stderr.
process.on('exit', () => process.stderr.write(`\nsavepoint-bench-peak-rss-kb ${process.resourceUsage().maxRSS}\n`));
