#!/usr/bin/env python3
"""pagecache_cliff.py: how much of a random read working set the kernel's
page cache serves, for working sets of growing size.

Reads random 8 kB blocks of a relation's files (its first N blocks) for a
while to warm up, then as long again, and prints the share of reads that
went to storage (/proc/self/io read_bytes).  Run it inside the memory
group a benchmark's server runs in (echo its pid into the group's
cgroup.procs first) to see the page cache that server really has: in a
1 GiB group holding a server with 256 MB of shared buffers, 90,000 blocks
were all served from memory and 130,000 only 12% (src/README.md, "Data
larger than memory").  A design measurement, not a benchmark of widecol.

    python3 pagecache_cliff.py /path/to/base/5/16545 SECONDS BLOCKS...
"""
import os
import random
import sys
import time

SEGMENT_BLOCKS = 131072  # 1 GB segment files of 8 kB blocks


def read_bytes():
    with open('/proc/self/io') as f:
        for line in f:
            if line.startswith('read_bytes'):
                return int(line.split()[1])
    return 0


def main():
    base, secs, sizes = sys.argv[1], float(sys.argv[2]), [int(n) for n in sys.argv[3:]]
    fds = {}

    def fd(seg):
        if seg not in fds:
            fds[seg] = os.open(base if seg == 0 else '%s.%d' % (base, seg), os.O_RDONLY)
        return fds[seg]

    for nblocks in sizes:
        for phase in ('warm-up', 'measured'):
            r0, n, t0 = read_bytes(), 0, time.time()
            while time.time() - t0 < secs:
                b = random.randrange(nblocks)
                os.pread(fd(b // SEGMENT_BLOCKS), 8192, (b % SEGMENT_BLOCKS) * 8192)
                n += 1
            if phase == 'measured':
                share = (read_bytes() - r0) / 8192 / n
                print('%8d blocks (%5.0f MB): %d reads, %.0f%% from storage'
                      % (nblocks, nblocks * 8192 / 1048576, n, 100 * share))


if __name__ == '__main__':
    main()
