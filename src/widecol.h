/*
 * widecol.h — names, constants and settings shared by every layer.
 *
 * Each module declares what others use in a header of its own, next to it
 * (src/README.md, "Map"); the formats are described in src/README.md.
 */
#ifndef WIDECOL_H
#define WIDECOL_H

#include "postgres.h"

#include "access/htup_details.h"
#include "access/tableam.h"
#include "datatype/timestamp.h"
#include "lib/stringinfo.h"
#include "storage/bufpage.h"
#include "utils/rel.h"
#include "utils/snapshot.h"

#define WIDECOL_AM_NAME "widecol"
#define WIDECOL_SCHEMA "widecol"
#define WIDECOL_OPTION_NAMESPACE "widecol"

/* ---------- GUCs (widecol.c) ---------- */
extern int	wc_level0_max_size_kb;
extern int	wc_bulk_write_mem_kb;
extern int	wc_write_ttl;
extern int	wc_partition_warn_size_kb;
extern int	wc_debug_clock_offset;
extern bool wc_preloaded;

extern void wc_check_preloaded(void);
extern int64 wc_now(void);
extern int64 wc_next_write_ts_n(int n);
extern bool wc_write_time_from_client(void);
extern void wc_clock_advance_to(int64 floor);

/* maintenance GUCs (widecol.c) */
extern int	wc_naptime_s;
extern int	wc_max_workers;
extern int	wc_worker_nice;
extern int	wc_compaction_throughput_mb;
extern double wc_debug_write_time;
extern int	wc_debug_fail_run_write;

#define WC_MAX_WORKERS_LIMIT 64


#endif							/* WIDECOL_H */
