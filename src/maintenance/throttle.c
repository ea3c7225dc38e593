/*
 * throttle.c — widecol.compaction_throughput: all compactions of the server
 * together read at most so many megabytes of row versions per second.
 *
 * Why a file of its own: the throttle is a policy on the compaction loop
 * (like vacuum_cost_delay for VACUUM), kept out of the run writer, which
 * also serves flushes and COPY — writers must never sleep for it.
 *
 * The budget is server-wide, as Cassandra's: a clock in shared memory
 * holds the time at which the budget is next free.  After each 64 kB of
 * input a compaction reserves the time those bytes cost at the configured
 * rate, starting at max(now, that clock), advances the clock past its
 * reservation with a compare-and-swap, and sleeps until its reservation
 * begins.  No credit accumulates while nothing compacts.  It sleeps on its
 * latch in slices of at most 100 ms, so a SIGTERM (shutdown,
 * pg_terminate_backend) or a cancel is handled promptly.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "pgstat.h"
#include "port/atomics.h"
#include "storage/latch.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "widecol.h"
#include "maintenance/maintenance.h"

#define THROTTLE_CHUNK	(64 * 1024)		/* reserve per 64 kB read */
#define THROTTLE_SLICE_MS 100			/* longest single sleep */

static int64 throttle_unchecked;

/* Start of a compaction: nothing read yet. */
void
wc_throttle_begin(void)
{
	throttle_unchecked = 0;
}

/* Account for bytes read; sleep until the server-wide budget allows them. */
void
wc_throttle(int64 bytes)
{
	pg_atomic_uint64 *clock;
	uint64		old;
	uint64		start;
	uint64		cost_us;

	throttle_unchecked += bytes;
	if (throttle_unchecked < THROTTLE_CHUNK)
		return;
	if (wc_compaction_throughput_mb <= 0)
	{
		throttle_unchecked = 0;
		return;
	}
	/* bytes per microsecond = MB/s (megabytes of 10^6 bytes) */
	cost_us = throttle_unchecked / wc_compaction_throughput_mb;
	throttle_unchecked = 0;

	clock = wc_throttle_clock();
	old = pg_atomic_read_u64(clock);
	for (;;)
	{
		start = Max((uint64) GetCurrentTimestamp(), old);
		if (pg_atomic_compare_exchange_u64(clock, &old, start + cost_us))
			break;
	}
	for (;;)
	{
		int64		now = GetCurrentTimestamp();

		if ((uint64) now >= start)
			break;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 Min((long) ((start - now) / 1000) + 1, THROTTLE_SLICE_MS),
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}
