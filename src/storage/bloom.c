/*
 * bloom.c — a blocked bloom filter on partition keys.
 *
 * One hash picks a page, the probes all fall inside it: a lookup reads one
 * page.  16 bits per key and 7 probes give about 0.1% false positives
 * (10 bits gave 1%: a lookup by key in a table of six runs then read a
 * key page it did not need once in 20 times, its p95-p99 latency).  The
 * reader takes the page count from the run header, so runs written with
 * another count read the same.
 */
#include "postgres.h"

#include "common/hashfn.h"

#include "widecol.h"
#include "storage/bloom.h"
#include "storage/page.h"

uint64
wc_bloom_hash(const char *pk, int pklen)
{
	return DatumGetUInt64(hash_any_extended((const unsigned char *) pk, pklen, 0x77636F6CU));
}

uint32
wc_bloom_npages(int64 nkeys)
{
	int64		bits = Max(nkeys, 1) * WC_BLOOM_BITS_PER_KEY;

	return (uint32) ((bits + WC_BLOOM_PAGE_BITS - 1) / WC_BLOOM_PAGE_BITS);
}

uint32
wc_bloom_page_for(uint32 npages, uint64 hash)
{
	/* the high bits pick the page; the probes use the low 32 bits */
	return (uint32) ((hash >> 32) % npages);
}

static inline uint32
probe_bit(uint64 hash, int i)
{
	uint32		h1 = (uint32) hash;
	uint32		h2 = murmurhash32(h1);

	return (h1 + (uint32) i * (h2 | 1)) % WC_BLOOM_PAGE_BITS;
}

void
wc_bloom_set(char *pages, uint32 npages, uint64 hash)
{
	char	   *p = pages + (Size) wc_bloom_page_for(npages, hash) * WC_PAYLOAD_CAPACITY;

	for (int i = 0; i < WC_BLOOM_PROBES; i++)
	{
		uint32		bit = probe_bit(hash, i);

		p[bit >> 3] |= (char) (1 << (bit & 7));
	}
}

bool
wc_bloom_test(const char *page_payload, uint64 hash)
{
	for (int i = 0; i < WC_BLOOM_PROBES; i++)
	{
		uint32		bit = probe_bit(hash, i);

		if ((page_payload[bit >> 3] & (1 << (bit & 7))) == 0)
			return false;
	}
	return true;
}
