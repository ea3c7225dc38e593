/*
 * throttle.c — widecol.compaction_throughput: compaction reads at most so
 * many megabytes of row versions per second.
 *
 * Why a file of its own: the throttle is a policy on the compaction loop
 * (like vacuum_cost_delay for VACUUM), kept out of the run writer, which
 * also serves flushes and COPY — writers must never sleep for it.  The
 * budget is global per process and time-based: after each chunk of input
 * the process sleeps until the bytes read so far would have taken that long
 * at the configured rate.  It sleeps on its latch in short slices, so a
 * SIGTERM (shutdown, pg_terminate_backend) or a cancel is handled promptly.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "widecol.h"

#define THROTTLE_CHUNK	(64 * 1024)		/* check the clock every 64 kB */
#define THROTTLE_SLICE_MS 100			/* longest single sleep */

static TimestampTz throttle_start;
static int64 throttle_bytes;
static int64 throttle_unchecked;

/* Start measuring: called at the beginning of each compaction. */
void
wc_throttle_begin(void)
{
	throttle_start = GetCurrentTimestamp();
	throttle_bytes = 0;
	throttle_unchecked = 0;
}

/* Account for bytes read; sleep if we are ahead of the allowed rate. */
void
wc_throttle(int64 bytes)
{
	throttle_unchecked += bytes;
	if (throttle_unchecked < THROTTLE_CHUNK)
		return;
	throttle_bytes += throttle_unchecked;
	throttle_unchecked = 0;
	while (wc_compaction_throughput_mb > 0)
	{
		/* bytes per microsecond = MB/s */
		int64		due_us = throttle_bytes / wc_compaction_throughput_mb;
		int64		elapsed_us = GetCurrentTimestamp() - throttle_start;
		long		sleep_ms;

		if (elapsed_us >= due_us)
			break;
		sleep_ms = Min((due_us - elapsed_us) / 1000 + 1, THROTTLE_SLICE_MS);
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 sleep_ms, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}
