#!/usr/bin/env python3
"""Generate image-metadata rows as CSV for the widecol demo and benchmarks.

  image_rows.py [--rows N] [--seed S] [--devices D] [--days K]
                [--start-date YYYY-MM-DD] [--table images|tags|store] [--quiet]

--table images (default) emits rows for

  device_daily_images (device_id, day_bucket, capture_time, image_id,
                       object_store, object_key, width, height, content_hash)

--table tags emits 0-3 rows per image, for the same images (same seed and
sizes give the same images), for

  images_by_tag (tag, day_bucket, capture_time, image_id, device_id, object_key)

--table store emits one row per image, with its tags as an array and an
upload batch (1000 consecutive images), for the images table of
widecol.create_image_store():

  images (image_id, device_id, capture_time, batch_id, object_store,
          object_key, width, height, content_hash, tags)

Rows arrive in capture-time order, as they would from cameras uploading
live: N images are spread evenly over --days days starting at --start-date
(UTC), each at a random offset inside its own time slot, so capture times
never go backwards.  Devices are picked at random with fixed per-device
weights (some cameras are busier than others).  Everything, including the
uuids and hashes, comes from random.Random(seed): same arguments, same
bytes.  Standard library only.

A progress line (rows and rows/s) goes to stderr: rewritten in place with
\\r about every 1% on a terminal, one line about every 10% otherwise.
"""

import argparse
import csv
import datetime as dt
import os
import random
import sys
import time
import uuid

OBJECT_STORE = "s3://bucket-eu-1"
# (width, height), weight: common camera and video frame sizes.
SIZES = [((1920, 1080), 40), ((1280, 720), 25), ((3840, 2160), 15),
         ((2592, 1944), 12), ((640, 480), 8)]
TAGS = ["crack", "rust", "corrosion", "leak", "ok", "blur"]
TAG_WEIGHTS = [5, 4, 3, 2, 8, 3]   # relative frequency of each tag
TAGS_PER_IMAGE = [30, 40, 20, 10]  # weights for 0, 1, 2, 3 tags


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=200000,
                   help="number of images (default 200000)")
    p.add_argument("--seed", type=int, default=42, help="random seed (default 42)")
    p.add_argument("--devices", type=int, default=50,
                   help="number of cameras, cam-0001.. (default 50)")
    p.add_argument("--days", type=int, default=7,
                   help="days the images are spread over (default 7)")
    p.add_argument("--start-date", default="2025-01-01",
                   help="first day, YYYY-MM-DD, UTC (default 2025-01-01)")
    p.add_argument("--table", choices=["images", "tags", "store"], default="images",
                   help="images: device_daily_images rows; tags: images_by_tag rows; "
                        "store: rows of an image store's images table")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    a = p.parse_args(argv)
    if a.rows < 0 or a.devices < 1 or a.days < 1:
        p.error("--rows must be >= 0, --devices and --days >= 1")
    try:
        a.start = dt.datetime.strptime(a.start_date, "%Y-%m-%d").replace(
            tzinfo=dt.timezone.utc)
    except ValueError:
        p.error("--start-date must be YYYY-MM-DD")
    return a


def images(a):
    """Yield one tuple per image, in capture-time order."""
    rng = random.Random(a.seed)
    devices = ["cam-%04d" % i for i in range(1, a.devices + 1)]
    cum, total = [], 0.0
    for _ in devices:
        total += rng.uniform(0.5, 2.0)
        cum.append(total)
    sizes = [s for s, _ in SIZES]
    size_cum, t = [], 0
    for _, w in SIZES:
        t += w
        size_cum.append(t)
    slot_us = a.days * 86400 * 10**6 / a.rows if a.rows else 0
    one_us = dt.timedelta(microseconds=1)
    for i in range(a.rows):
        offset = int((i + rng.random()) * slot_us)
        capture = a.start + offset * one_us
        device = rng.choices(devices, cum_weights=cum)[0]
        image_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        width, height = rng.choices(sizes, cum_weights=size_cum)[0]
        content_hash = "%064x" % rng.getrandbits(256)
        day = capture.date()
        object_key = "raw/%s/%04d/%02d/%02d/%s.jpg" % (
            device, day.year, day.month, day.day, image_id)
        yield (device, day.isoformat(), capture.isoformat(sep=" ", timespec="microseconds"),
               image_id, OBJECT_STORE, object_key, width, height, content_hash)


class Progress:
    def __init__(self, label, total, quiet):
        self.label, self.total, self.quiet = label, total, quiet
        self.tty = sys.stderr.isatty()
        self.every = max(1, total // (100 if self.tty else 10))
        self.t0 = time.monotonic()

    def line(self, done, rows):
        secs = max(time.monotonic() - self.t0, 1e-6)
        pct = 100.0 * done / self.total if self.total else 100.0
        return "%s: %s/%s images (%3.0f%%), %s rows, %s rows/s" % (
            self.label, format(done, ","), format(self.total, ","), pct,
            format(rows, ","), format(int(rows / secs), ","))

    def update(self, done, rows):
        if self.quiet or done % self.every or done == self.total:
            return  # the last line is finish()'s
        if self.tty:
            sys.stderr.write("\r" + self.line(done, rows) + "  ")
        else:
            sys.stderr.write(self.line(done, rows) + "\n")
        sys.stderr.flush()

    def finish(self, done, rows):
        if self.quiet:
            return
        secs = time.monotonic() - self.t0
        end = "\r" if self.tty else ""
        sys.stderr.write("%s%s, done in %.1f s\n" % (end, self.line(done, rows), secs))
        sys.stderr.flush()


def main(argv):
    a = parse_args(argv)
    out = csv.writer(sys.stdout, lineterminator="\n")
    label = {"images": "device_daily_images", "tags": "images_by_tag", "store": "images"}[a.table]
    prog = Progress(label, a.rows, a.quiet)
    # Tags use their own generator so that the images stay identical.
    tag_rng = random.Random("%d/tags" % a.seed)
    tag_cum, t = [], 0
    for w in TAG_WEIGHTS:
        t += w
        tag_cum.append(t)
    rows = done = 0
    try:
        for img in images(a):
            if a.table == "images":
                out.writerow(img)
                rows += 1
                done += 1
                prog.update(done, rows)
                continue
            device, day, capture, image_id, store, object_key, width, height, chash = img
            k = tag_rng.choices(range(4), weights=TAGS_PER_IMAGE)[0]
            chosen = set()
            while len(chosen) < k:
                chosen.add(tag_rng.choices(TAGS, cum_weights=tag_cum)[0])
            if a.table == "store":
                out.writerow((image_id, device, capture, "batch-%06d" % (done // 1000), store,
                              object_key, width, height, chash,
                              "{" + ",".join(sorted(chosen)) + "}"))
                rows += 1
            else:
                for tag in sorted(chosen):
                    out.writerow((tag, day, capture, image_id, device, object_key))
                    rows += 1
            done += 1
            prog.update(done, rows)
        sys.stdout.flush()
    except BrokenPipeError:
        sys.stderr.write("\n%s: output closed after %d rows (the reader stopped)\n"
                         % (label, rows))
        # Point stdout at /dev/null so that the flush at exit stays quiet.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    prog.finish(done, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
