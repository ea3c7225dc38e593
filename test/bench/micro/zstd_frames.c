/*
 * zstd_frames.c: what a point lookup would pay to decode the object-path
 * column of one value page (110 values like bigdata.sh's
 * "raw/cam-0042/2025/01/07/<uuid>.jpg") as it is stored today (one zstd
 * frame per column chunk) against frames of F values compressed with a
 * zstd dictionary trained on other pages (ZDICT_trainFromBuffer; the
 * decoder's tables come pre-built in a ZSTD_DDict), and against lz4.
 * Pages are visited in random order over 3,000 of them, so the data is not
 * all in the CPU's caches, as in a lookup.  A design measurement for a
 * future run format, not a benchmark of widecol itself.
 *
 *   cc -O2 test/bench/micro/zstd_frames.c -o /tmp/zstd_frames -lzstd -llz4
 *   /tmp/zstd_frames [F [DICT_BYTES]]
 *
 * On this machine (2026-12-04, libzstd 1.5.4, level 1, 16 kB dictionary;
 * two runs): one frame of 110 values 2,659 bytes a page, 5.2-6.4 us to
 * decode (with the dictionary too); frames of 16 values with the
 * dictionary 2,893-2,895 bytes (+9%), 1.5-1.6 us for the frame holding one
 * value; of 8 values 3,098-3,105 bytes (+17%), 0.8 us; of 32 values
 * 2,794-2,797 bytes, 2.8-3.0 us; lz4, one frame, 4,984 bytes, 1.6-1.9 us.
 * Training on 256 kB of samples, as a run writer does: 126-148 ms
 * (2026-12-05, three runs).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zstd.h>
#include <zdict.h>
#include <lz4.h>

#define NP 4000
#define ROWS 110
static double now(){struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return t.tv_sec+t.tv_nsec*1e-9;}

/* 64 random-looking bits of x (splitmix64): the uuids' bytes */
static unsigned long long mix(unsigned long long x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static int mkchunk(long first, int n, char *out)
{
	int o = 0;
	for (long r = first; r < first + n; r++) {
		char hx[33], p[128];
		sprintf(hx, "%016llx%016llx", mix(2 * r), mix(2 * r + 1));
		int dev = 1 + (int) ((r * 2654435761u) >> 8) % 200;
		int pl = sprintf(p, "raw/cam-%04d/2025/01/%02d/%.8s-%.4s-%.4s-%.4s-%.12s.jpg", dev, 1 + (int) (r % 28),
						 hx, hx + 8, hx + 12, hx + 16, hx + 20);
		out[o++] = (char) (((pl + 1) << 1) | 1);
		memcpy(out + o, p, pl); o += pl;
	}
	return o;
}

int main(int argc, char **argv)
{
	int F = argc > 1 ? atoi(argv[1]) : 16;
	int DS = argc > 2 ? atoi(argv[2]) : 16384;
	static char raw[NP][ROWS * 80]; static int rawlen[NP];
	static int fstart[NP][ROWS + 1];	/* byte offset of each value */
	for (int pg = 0; pg < NP; pg++) {
		rawlen[pg] = mkchunk((long) pg * ROWS, ROWS, raw[pg]);
		int o = 0; for (int i = 0; i < ROWS; i++) { fstart[pg][i] = o; o += ((unsigned char) raw[pg][o]) >> 1; } fstart[pg][ROWS] = o;
	}
	/* train on frames of the first 1000 pages */
	int nf = (ROWS + F - 1) / F;
	size_t *ss = malloc(sizeof(size_t) * 1000 * nf); char *sb = malloc(1000 * ROWS * 80); size_t so = 0; int ns = 0;
	for (int pg = 0; pg < 1000; pg++)
		for (int f = 0; f < nf; f++) {
			int a = fstart[pg][f * F], b = fstart[pg][(f + 1) * F < ROWS ? (f + 1) * F : ROWS];
			memcpy(sb + so, raw[pg] + a, b - a); ss[ns++] = b - a; so += b - a;
		}
	char *dict = malloc(DS);
	/* what training costs a run writer: on its first 256 kB of samples */
	int n256 = 0; size_t s256 = 0;
	while (n256 < ns && s256 + ss[n256] <= 256 * 1024) s256 += ss[n256++];
	double t256 = now();
	size_t d256 = ZDICT_trainFromBuffer(dict, DS, sb, ss, n256);
	printf("training on %zu bytes of samples (a run writer's): %.1f ms%s\n", s256, (now() - t256) * 1e3,
		   ZDICT_isError(d256) ? " (failed)" : "");
	size_t dl = ZDICT_trainFromBuffer(dict, DS, sb, ss, ns);
	if (ZDICT_isError(dl)) { printf("train: %s\n", ZDICT_getErrorName(dl)); return 1; }
	ZSTD_CDict *cd = ZSTD_createCDict(dict, dl, 1);
	ZSTD_DDict *dd = ZSTD_createDDict(dict, dl);
	ZSTD_CCtx *cc = ZSTD_createCCtx(); ZSTD_DCtx *dc = ZSTD_createDCtx();
	/* whole-chunk zstd, framed dict zstd, lz4 whole */
	static char zw[NP][ROWS * 80]; static int zwl[NP];
	static char zf[NP][ROWS * 90]; static int zfo[NP][ROWS + 1];
	static char lz[NP][ROWS * 90]; static int lzl[NP];
	long tw = 0, tf = 0, tl = 0;
	for (int pg = 1000; pg < NP; pg++) {
		zwl[pg] = ZSTD_compressCCtx(cc, zw[pg], sizeof zw[pg], raw[pg], rawlen[pg], 1); tw += zwl[pg];
		int o = 0;
		for (int f = 0; f < nf; f++) {
			int a = fstart[pg][f * F], b = fstart[pg][(f + 1) * F < ROWS ? (f + 1) * F : ROWS];
			zfo[pg][f] = o;
			o += ZSTD_compress_usingCDict(cc, zf[pg] + o, sizeof zf[pg] - o, raw[pg] + a, b - a, cd);
		}
		zfo[pg][nf] = o; tf += o;
		lzl[pg] = LZ4_compress_default(raw[pg], lz[pg], rawlen[pg], sizeof lz[pg]); tl += lzl[pg];
	}
	int np = NP - 1000;
	printf("F=%d dict %zu B: bytes/page raw %d, zstd whole %.0f, zstd %d-row frames+dict %.0f, lz4 %.0f\n",
		   F, dl, rawlen[2000], (double) tw / np, F, (double) tf / np, (double) tl / np);
	static char out[ROWS * 80];
	int N = 200000; volatile long s = 0; unsigned rnd = 1;
	double t = now();
	for (int i = 0; i < N; i++) { rnd = rnd * 1103515245 + 12345; int pg = 1000 + (rnd >> 8) % np;
		s += ZSTD_decompressDCtx(dc, out, sizeof out, zw[pg], zwl[pg]); }
	double a = now() - t; t = now();
	for (int i = 0; i < N; i++) { rnd = rnd * 1103515245 + 12345; int pg = 1000 + (rnd >> 8) % np; int f = (rnd >> 3) % nf;
		s += ZSTD_decompress_usingDDict(dc, out, sizeof out, zf[pg] + zfo[pg][f], zfo[pg][f + 1] - zfo[pg][f], dd); }
	double b = now() - t; t = now();
	for (int i = 0; i < N; i++) { rnd = rnd * 1103515245 + 12345; int pg = 1000 + (rnd >> 8) % np;
		s += LZ4_decompress_safe(lz[pg], out, lzl[pg], sizeof out); }
	double c = now() - t;
	printf("decode us: zstd whole %.2f, one %d-row frame with dict %.2f, lz4 whole %.2f\n", a / N * 1e6, F, b / N * 1e6, c / N * 1e6);
	return 0;
}
