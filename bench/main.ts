/** `npm run bench`: the waste benchmark; `npm run bench -- --cost`: the prompt-caching cost benchmark. */
if (process.argv.includes('--cost')) await import('./cost.js');
else await import('./waste.js');
