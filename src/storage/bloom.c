/*
 * bloom.c — a blocked bloom filter on partition keys.
 *
 * One hash picks a page, the probes all fall inside it: a lookup reads one
 * page.  16 bits per key and 7 probes give about 0.1% false positives
 * (10 bits gave 1%: a lookup by key in a table of six runs then read a
 * key page it did not need once in 20 times, its p95-p99 latency).  The
 * reader takes the page count from the run header, so runs written with
 * another count read the same.
 *
 * Since run format 7 the probes of a key fall in one 64-byte block of the
 * page, which has its own CRC-32C (bloom.h): a seek probes the shared
 * buffer directly, and the pages stay hot in shared buffers for every
 * backend instead of being copied into each backend's cache.
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "port/pg_crc32c.h"

#include "widecol.h"
#include "storage/bloom.h"
#include "storage/page.h"

#define BLOCK_BITS	(WC_BLOOM_BLOCK_BYTES * 8)

uint64
wc_bloom_hash(const char *pk, int pklen)
{
	return DatumGetUInt64(hash_any_extended((const unsigned char *) pk, pklen, 0x77636F6CU));
}

uint32
wc_bloom_npages(int64 nkeys, bool blocked)
{
	int64		bits = Max(nkeys, 1) * WC_BLOOM_BITS_PER_KEY;
	int64		per_page = blocked ? (int64) WC_BLOOM_BLOCKS * BLOCK_BITS : WC_BLOOM_PAGE_BITS;

	return (uint32) ((bits + per_page - 1) / per_page);
}

uint32
wc_bloom_page_for(uint32 npages, uint64 hash)
{
	/* the high bits pick the page; the probes use the low 32 bits */
	return (uint32) ((hash >> 32) % npages);
}

/* Bit i of a key's probes: in the page, or (blocked) in its block. */
static inline uint32
probe_bit(uint64 hash, int i, uint32 nbits)
{
	uint32		h1 = (uint32) hash;
	uint32		h2 = murmurhash32(h1);

	return (h1 + (uint32) i * (h2 | 1)) % nbits;
}

/* The block of a key in its page (blocked layout): other bits than the probes'. */
static inline int
block_of(uint64 hash)
{
	return murmurhash32((uint32) hash ^ 0x9E3779B9U) % WC_BLOOM_BLOCKS;
}

#define BLOCK(payload, b)	((payload) + (Size) (b) * WC_BLOOM_BLOCK_BYTES)
#define BLOCK_CRC(payload, b) \
	((payload) + (Size) WC_BLOOM_BLOCKS * WC_BLOOM_BLOCK_BYTES + (Size) (b) * sizeof(pg_crc32c))

static pg_crc32c
block_crc(const char *payload, int b)
{
	pg_crc32c	crc;

	INIT_CRC32C(crc);
	COMP_CRC32C(crc, BLOCK(payload, b), WC_BLOOM_BLOCK_BYTES);
	FIN_CRC32C(crc);
	return crc;
}

/* Is block b's stored checksum right? */
static bool
block_crc_ok(const char *payload, int b)
{
	pg_crc32c	crc = block_crc(payload, b);

	return memcmp(BLOCK_CRC(payload, b), &crc, sizeof(crc)) == 0;
}

void
wc_bloom_set(char *page_payload, uint64 hash, bool blocked)
{
	char	   *p = blocked ? BLOCK(page_payload, block_of(hash)) : page_payload;
	uint32		nbits = blocked ? BLOCK_BITS : WC_BLOOM_PAGE_BITS;

	for (int i = 0; i < WC_BLOOM_PROBES; i++)
	{
		uint32		bit = probe_bit(hash, i, nbits);

		p[bit >> 3] |= (char) (1 << (bit & 7));
	}
}

/* Blocked layout: store every block's checksum once its bits are set. */
void
wc_bloom_seal(char *page_payload)
{
	for (int b = 0; b < WC_BLOOM_BLOCKS; b++)
	{
		pg_crc32c	crc = block_crc(page_payload, b);

		memcpy(BLOCK_CRC(page_payload, b), &crc, sizeof(crc));
	}
}

bool
wc_bloom_test(const char *page_payload, uint64 hash, bool blocked)
{
	const char *p = blocked ? BLOCK(page_payload, block_of(hash)) : page_payload;
	uint32		nbits = blocked ? BLOCK_BITS : WC_BLOOM_PAGE_BITS;

	for (int i = 0; i < WC_BLOOM_PROBES; i++)
	{
		uint32		bit = probe_bit(hash, i, nbits);

		if ((p[bit >> 3] & (1 << (bit & 7))) == 0)
			return false;
	}
	return true;
}

/*
 * Blocked layout: what is wrong with a page of len payload bytes for a
 * probe of hash (its length; with check_crc the checksum of the block
 * probed), or NULL.
 */
const char *
wc_bloom_block_problem(const char *page_payload, Size len, uint64 hash, bool check_crc)
{
	if (len != WC_PAYLOAD_CAPACITY)
		return "bloom page of the wrong length";
	if (check_crc && !block_crc_ok(page_payload, block_of(hash)))
		return "bloom block checksum mismatch";
	return NULL;
}

/* Blocked layout: the first block whose checksum is wrong, or -1 (verify). */
int
wc_bloom_bad_block(const char *page_payload)
{
	for (int b = 0; b < WC_BLOOM_BLOCKS; b++)
		if (!block_crc_ok(page_payload, b))
			return b;
	return -1;
}
