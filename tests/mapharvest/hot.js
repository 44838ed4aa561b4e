// A JIT-compiled hot loop for the mapharvest tests: runs for argv[2] seconds
// so that V8 writes tracerigHotLoop into its perf map / jitdump.
function tracerigHotLoop(n) {
	let s = 0;
	for (let i = 0; i < n; i++)
		s += Math.sqrt(i) * (i & 7);
	return s;
}
const seconds = Number(process.argv[2] || 5);
const end = Date.now() + seconds * 1000;
let total = 0;
while (Date.now() < end)
	total += tracerigHotLoop(200000);
process.stdout.write(total > 0 ? 'done\n' : 'none\n');
