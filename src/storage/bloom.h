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

extern uint64 wc_bloom_hash(const char *pk, int pklen);
extern uint32 wc_bloom_npages(int64 nkeys);
extern void wc_bloom_set(char *pages, uint32 npages, uint64 hash);
extern bool wc_bloom_test(const char *page_payload, uint64 hash);
extern uint32 wc_bloom_page_for(uint32 npages, uint64 hash);

#endif
