# Helpers of bench/flight/run.sh (python3, standard library only).
#
#   trigger.py fire PID SIGNAL DIR PREFIX [TIMEOUT_S]
#       sends SIGNAL to PID, then watches DIR for a new file whose name
#       starts with PREFIX (not a dot file: tracerig writes its archive
#       under a temporary dot name and renames it when it is finished; perf
#       renames perf.data to perf.data.<time> once the header is written);
#       prints "ms path t0": from the signal to the file (polled every 2 ms),
#       the file, the signal's CLOCK_MONOTONIC time (ms).
#   trigger.py sample OUT PID DIR...
#       every 0.5 s until killed or PID is gone, appends "ms disk_bytes... rss_kb" to OUT:
#       the disk blocks each DIR uses (st_blocks, as du), the RSS of PID.
#   trigger.py cpu PID
#       the CPU time of PID, its threads and its waited-for children (ms).
import os, signal, sys, time


def now_ms():
    return time.clock_gettime(time.CLOCK_MONOTONIC) * 1000


def fire(pid, sig, d, prefix, timeout=300):
    before = set(os.listdir(d))
    t0 = now_ms()
    os.kill(int(pid), getattr(signal, sig))
    while now_ms() - t0 < float(timeout) * 1000:
        for name in os.listdir(d):
            if name not in before and name.startswith(prefix) and not name.startswith('.'):
                print(round(now_ms() - t0), os.path.join(d, name), round(t0))
                return 0
        time.sleep(0.002)
    print('timeout', file=sys.stderr)
    return 1


def disk(d):
    total = 0
    for root, dirs, files in os.walk(d):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_blocks * 512
            except OSError:
                pass
    return total


def rss(pid):
    try:
        for line in open(f'/proc/{pid}/status'):
            if line.startswith('VmRSS:'):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def sample(out, pid, dirs):
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with open(out, 'a', buffering=1) as f:
        while os.path.exists(f'/proc/{pid}'):
            f.write(' '.join(str(v) for v in [round(now_ms())] + [disk(d) for d in dirs] + [rss(pid)]) + '\n')
            time.sleep(0.5)


def cpu(pid):
    f = open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()
    hz = os.sysconf('SC_CLK_TCK')
    # utime stime cutime cstime: fields 14-17 of stat(5), 12-15 after ')'.
    print(round(sum(int(x) for x in f[11:15]) * 1000 / hz))


if __name__ == '__main__':
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == 'fire':
        sys.exit(fire(*args))
    elif cmd == 'sample':
        sample(args[0], args[1], args[2:])
    elif cmd == 'cpu':
        cpu(args[0])
