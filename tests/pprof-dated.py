"""pprof-dated.py PROFILE.pb.gz MANIFEST.json: the profile is dated by the
flight snapshot's range the manifest gives (time_nanos at its start within a
second, duration_nanos its length within a microsecond).  Reads
profile.proto's top level by hand: time_nanos is field 9, duration_nanos
field 10, both varints."""
import gzip
import json
import sys
from datetime import datetime, timezone


def top_level_varints(data):
    i, fields = 0, {}

    def varint():
        nonlocal i
        v = s = 0
        while True:
            b = data[i]
            i += 1
            v |= (b & 0x7f) << s
            s += 7
            if b < 0x80:
                return v

    while i < len(data):
        key = varint()
        num, wt = key >> 3, key & 7
        if wt == 0:
            fields[num] = varint()
        elif wt == 2:
            n = varint()  # before i is read: varint() moves it
            i += n
        elif wt == 1:
            i += 8
        elif wt == 5:
            i += 4
        else:
            raise SystemExit("wire type %d at %d: not a profile" % (wt, i))
    return fields


fields = top_level_varints(gzip.open(sys.argv[1]).read())
f = json.load(open(sys.argv[2]))["flight"]
start = datetime.strptime(f["from_utc"], "%Y-%m-%dT%H:%M:%SZ").replace(
    tzinfo=timezone.utc).timestamp()
print(fields.get(9), fields.get(10), f)
assert abs(fields[9] / 1e9 - start) <= 1.0, (fields.get(9), start)
assert abs(fields[10] - (f["to_monotonic_ns"] - f["from_monotonic_ns"])) <= 1000, fields.get(10)
