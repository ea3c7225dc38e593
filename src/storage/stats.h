/*
 * storage/stats.h — read-time counters per table in shared memory.
 */
#ifndef WC_STORAGE_STATS_H
#define WC_STORAGE_STATS_H

#include "widecol.h"

/* ---------- read-time counters (stats.c) ---------- */
extern void wc_stats_shmem_request(void);
extern void wc_stats_shmem_startup(void);
extern void wc_stats_count_bloom(uint64 storage_id, int64 checks, int64 negatives,
								 int64 false_positives);
extern void wc_stats_read(uint64 storage_id, int64 *checks, int64 *negatives,
						  int64 *false_positives);

#endif
