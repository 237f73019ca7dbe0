// Loaded with `node --import` into a process a benchmark starts: when the process ends, it prints
// its own peak RSS (the kernel's high-water mark: peak-rss-kb.mjs) and CPU time as tagged lines on
// stderr, and the CPU it had spent when this preload ran — Node's own start, before the process's
// script imports anything: the same-process floor a command's CPU is held to (bench/check.ts).
import { peakRssKb } from './peak-rss-kb.mjs';

const started = process.cpuUsage();

process.on('exit', () => {
  const usage = process.resourceUsage();
  process.stderr.write(`\nsavepoint-bench-peak-rss-kb ${peakRssKb()}\nsavepoint-bench-cpu-ms ${Math.round((usage.userCPUTime + usage.systemCPUTime) / 1000)}\nsavepoint-bench-start-cpu-ms ${((started.user + started.system) / 1000).toFixed(1)}\n`);
});
