/*
 * damage.h — tables whose pages failed their checks (damage.c).
 */
#ifndef WIDECOL_DAMAGE_H
#define WIDECOL_DAMAGE_H

#include "postgres.h"

#include "storage/block.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

/* One damaged segment of a table, as widecol.damage records it. */
typedef struct WcDamage
{
	const char *segment;		/* "run", "level0", "metapage"; "page" for a
								 * page PostgreSQL's checks refused */
	uint64		id;				/* run id or level-0 generation; 0 if unknown */
	BlockNumber block;			/* InvalidBlockNumber if unknown */
	char	   *problem;
	TimestampTz found;
} WcDamage;


extern void wc_damage_record(Relation rel, const WcDamage *d);
extern int	wc_damage_find(Relation rel, WcDamage *first);
extern void wc_damage_clear(Relation rel);
extern List *wc_damage_list(Relation rel);
extern void wc_damage_refuse(Relation rel, const char *what);
extern bool wc_damage_skip(Relation rel);
extern void wc_damage_after_error(Relation rel, const WcDamage *d);

#endif
