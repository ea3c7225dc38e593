/*
 * storage/bloom.h — the blocked bloom filter on partition keys.
 */
#ifndef WC_STORAGE_BLOOM_H
#define WC_STORAGE_BLOOM_H

#include "storage/page.h"

/* ---------- bloom (bloom.c) ---------- */
#define WC_BLOOM_BITS_PER_KEY	16
#define WC_BLOOM_PROBES			7
#define WC_BLOOM_PAGE_BITS		(WC_PAYLOAD_CAPACITY * 8)

/*
 * Run format 7 ("checked blocks"): a page holds WC_BLOOM_BLOCKS blocks of
 * 64 bytes, then one CRC-32C per block; a key's probes all fall in one
 * block, so a probe checks 64 bytes in the shared buffer instead of copying
 * and checking the page.  Earlier formats spread a key's probes over the
 * page (no block checksums: the page's CRC covers it).
 */
#define WC_BLOOM_BLOCK_BYTES	64
#define WC_BLOOM_BLOCKS	(WC_PAYLOAD_CAPACITY / (WC_BLOOM_BLOCK_BYTES + sizeof(uint32)))

extern uint64 wc_bloom_hash(const char *pk, int pklen);
extern uint32 wc_bloom_npages(int64 nkeys, bool blocked);
extern uint32 wc_bloom_page_for(uint32 npages, uint64 hash);
extern void wc_bloom_set(char *page_payload, uint64 hash, bool blocked);
extern void wc_bloom_seal(char *page_payload);
extern bool wc_bloom_test(const char *page_payload, uint64 hash, bool blocked);
extern const char *wc_bloom_block_problem(const char *page_payload, Size len, uint64 hash,
										  bool check_crc);
extern int	wc_bloom_bad_block(const char *page_payload);

#endif
