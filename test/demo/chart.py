#!/usr/bin/python3
"""Draw the demo's daily image counts as a PNG.

  chart.py COUNTS.csv OUT.png

COUNTS.csv has the columns day, key, images: one row per day and tag, and
one per day with key "all images" (test/demo/report.sql writes it from
img.daily_counts).  The chart shows all images per day as bars, and below,
per day, the images carrying each tag (an image has 0 to 3 tags).  Needs matplotlib (Debian:
python3-matplotlib).
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")  # no display
import matplotlib.pyplot as plt  # noqa: E402


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    counts = {}
    days = set()
    with open(argv[0], newline="") as f:
        for row in csv.DictReader(f):
            days.add(row["day"])
            counts.setdefault(row["key"], {})[row["day"]] = int(row["images"])
    days = sorted(days)
    total = counts.pop("all images", {})
    tags = sorted(counts, key=lambda t: -sum(counts[t].values()))

    x = list(range(len(days)))
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(10, 7), sharex=True,
                                      gridspec_kw={"height_ratios": [1, 1.3]})
    top.bar(x, [total.get(d, 0) for d in days], width=0.6, color="#4c72b0")
    top.set_ylabel("images")
    top.set_title("widecol demo: images per day (img.daily_counts)")
    top.grid(axis="y", alpha=0.3)
    for tag in tags:
        bottom.plot(x, [counts[tag].get(d, 0) for d in days], "-o", label=tag)
    bottom.set_ylabel("images with the tag")
    bottom.set_ylim(bottom=0)
    bottom.grid(alpha=0.3)
    bottom.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), title="tag")
    bottom.set_xticks(x)
    bottom.set_xticklabels(days, rotation=30, ha="right")
    fig.tight_layout()
    fig.savefig(argv[1], dpi=110)
    print("chart: %s (%d days, %d tags)" % (argv[1], len(days), len(tags)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
