// Loaded with `node --import` into a process a benchmark starts: when the process ends, it prints
// its own peak RSS (the kernel's high-water mark: peak-rss-kb.mjs) and CPU time as tagged lines on stderr.
import { peakRssKb } from './peak-rss-kb.mjs';

process.on('exit', () => {
  const usage = process.resourceUsage();
  process.stderr.write(`\nsavepoint-bench-peak-rss-kb ${peakRssKb()}\nsavepoint-bench-cpu-ms ${Math.round((usage.userCPUTime + usage.systemCPUTime) / 1000)}\n`);
});
