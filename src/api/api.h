/*
 * api/api.h — what the SQL-callable functions share.
 */
#ifndef WC_API_H
#define WC_API_H

#include "widecol.h"
#include "fmgr.h"
#include "storage/lockdefs.h"

/* ---------- opening a table for a function (functions.c) ---------- */
extern Relation wc_open_widecol(FunctionCallInfo fcinfo, LOCKMODE mode, bool owner);
extern Relation wc_open_widecol_oid(FunctionCallInfo fcinfo, Oid relid, LOCKMODE mode, bool owner);
extern List *wc_widecol_members(FunctionCallInfo fcinfo);
extern void wc_check_row_access(Oid relid, const char *function);

/* ---------- what functions return (functions.c) ---------- */
struct WcManifest;
struct WcMetaData;
extern Relation wc_srf_open_widecol(FunctionCallInfo fcinfo);
extern void wc_srf_put(FunctionCallInfo fcinfo, Datum *values, bool *nulls);
extern int	wc_run_id_cmp(const void *a, const void *b);
extern Datum wc_result_row(FunctionCallInfo fcinfo, Datum *values, bool *nulls);
extern struct WcManifest *wc_visible_manifest(Relation rel, struct WcMetaData *meta);

/* qttrigger.c */
extern void wc_query_tables_init(void);

#endif
