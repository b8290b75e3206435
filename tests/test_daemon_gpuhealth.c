/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_daemon_gpuhealth.c - the GPU health watch's rules (gsd_gpuh_judge,
 * gpuhealth.c) on made-up readings, and which Xids count as critical:
 * a critical Xid holds a GPU bad for the hold time from its last occurrence,
 * an application Xid never does; an uncorrected ECC count above the last
 * healthy reading's keeps it bad until the count drops (a reset); the first
 * reading's count is the base; lost, pages pending retirement, row remapping
 * pending or failed hold while NVML says so; reasons combine; the verdict's
 * 'since' moves only on a change.  (The watch end to end, through a fake
 * libnvidia-ml.so.1, is tests/e2e/gpu_health.sh.)
 */
#include <string.h>

#include "daemon.h"
#include "gpuhealth.h"
#include "harness.h"
#include "nvml.h"

static gsd_gpu_reading healthy(void)
{
    gsd_gpu_reading r;
    memset(&r, 0, sizeof r);
    r.ecc_uncorrected = 0;
    r.temp_c = 40;
    r.mem_used = 1;
    r.mem_total = 2;
    r.util = 0;
    r.xid_watch = 1;
    return r;
}

static void fresh(gsd_gpuh_gpu *t)
{
    memset(t, 0, sizeof *t);
    t->ecc_base = t->ecc_last = -1;
}

static void xid_hold(void)
{
    gsd_gpuh_gpu t;
    fresh(&t);
    gs_time hold = 10 * GS_SEC, now = 1000 * GS_SEC;
    gsd_gpu_reading r = healthy();
    ASSERT_EQ(gsd_gpuh_judge(&t, &r, now, hold), 0);
    ASSERT_EQ(t.bad, 0);
    ASSERT_STR(t.why, "");
    /* an application's Xid: counted, not held */
    r.nxid = 2;
    r.xid_last = 13;
    ASSERT_EQ(gsd_gpuh_judge(&t, &r, now += GS_SEC, hold), 0);
    ASSERT_EQ(t.bad, 0);
    ASSERT_EQ(t.xid_total, 2);
    ASSERT_EQ(t.xid_seen, 13);
    /* a critical one: bad at once */
    r.nxid = 1;
    r.xid_last = r.xid_crit = 79;
    ASSERT_EQ(gsd_gpuh_judge(&t, &r, now += GS_SEC, hold), 1);
    ASSERT_EQ(t.bad, 1);
    ASSERT_STR(t.why, "Xid 79: GPU has fallen off the bus");
    ASSERT_EQ(t.since, now);
    gs_time bad_at = now;
    /* no more events: still bad within the hold, 'since' kept */
    r = healthy();
    ASSERT_EQ(gsd_gpuh_judge(&t, &r, now += 5 * GS_SEC, hold), 0);
    ASSERT_EQ(t.bad, 1);
    ASSERT_EQ(t.since, bad_at);
    /* a second Xid restarts the hold */
    r.nxid = 1;
    r.xid_last = r.xid_crit = 48;
    ASSERT_EQ(gsd_gpuh_judge(&t, &r, now += GS_SEC, hold), 0);
    ASSERT_STR(t.why, "Xid 48: double-bit ECC error");
    r = healthy();
    ASSERT_EQ(gsd_gpuh_judge(&t, &r, now += 9 * GS_SEC, hold), 0);
    ASSERT_EQ(t.bad, 1);
    ASSERT_EQ(gsd_gpuh_judge(&t, &r, now += GS_SEC, hold), 1);
    ASSERT_EQ(t.bad, 0);
    ASSERT_STR(t.why, "");
    ASSERT_EQ(t.since, now);
    ASSERT_EQ(t.xid_total, 4);
}

static void ecc_base(void)
{
    gsd_gpuh_gpu t;
    fresh(&t);
    gs_time now = GS_SEC;
    gsd_gpu_reading r = healthy();
    r.ecc_uncorrected = 5; /* errors from before the watch: the base, not a fault */
    ASSERT_EQ(gsd_gpuh_judge(&t, &r, now, GS_SEC), 0);
    ASSERT_EQ(t.bad, 0);
    ASSERT_EQ(t.ecc_base, 5);
    r.ecc_uncorrected = 7;
    ASSERT_EQ(gsd_gpuh_judge(&t, &r, now += GS_SEC, GS_SEC), 1);
    ASSERT_STR(t.why, "ECC: 2 uncorrected error(s) since the GPU was last healthy");
    /* the count stays: still bad (the base is the last healthy reading's) */
    ASSERT_EQ(gsd_gpuh_judge(&t, &r, now += 100 * GS_SEC, GS_SEC), 0);
    ASSERT_EQ(t.bad, 1);
    ASSERT_EQ(t.ecc_base, 5);
    /* NVML does not answer the count (-1): judged on the last count it gave */
    r.ecc_uncorrected = -1;
    ASSERT_EQ(gsd_gpuh_judge(&t, &r, now += GS_SEC, GS_SEC), 0);
    ASSERT_EQ(t.bad, 1);
    ASSERT_EQ(t.ecc_base, 5);
    /* a reset: the count drops to 0, the new base */
    r.ecc_uncorrected = 0;
    ASSERT_EQ(gsd_gpuh_judge(&t, &r, now += GS_SEC, GS_SEC), 1);
    ASSERT_EQ(t.bad, 0);
    ASSERT_EQ(t.ecc_base, 0);
    r.ecc_uncorrected = 1;
    ASSERT_EQ(gsd_gpuh_judge(&t, &r, now += GS_SEC, GS_SEC), 1);
    ASSERT_STR(t.why, "ECC: 1 uncorrected error(s) since the GPU was last healthy");
}

static void conditions(void)
{
    gsd_gpuh_gpu t;
    fresh(&t);
    gs_time now = GS_SEC;
    gsd_gpu_reading r = healthy();
    r.lost = 1;
    snprintf(r.lost_why, sizeof r.lost_why, "GPU is lost");
    r.ecc_uncorrected = -1;
    ASSERT_EQ(gsd_gpuh_judge(&t, &r, now, GS_SEC), 1);
    ASSERT_STR(t.why, "GPU lost (GPU is lost)");
    r = healthy();
    r.retire_pending = 1;
    r.remap_pending = 1;
    r.remap_failure = 0;
    ASSERT_EQ(gsd_gpuh_judge(&t, &r, now += GS_SEC, GS_SEC), 0);
    ASSERT_STR(t.why,
               "pages pending retirement (reset the GPU); row remapping pending (reset the GPU)");
    /* a critical Xid comes first in the reason */
    r.nxid = 1;
    r.xid_last = r.xid_crit = 95;
    r.remap_pending = 0;
    r.remap_failure = 1;
    ASSERT_EQ(gsd_gpuh_judge(&t, &r, now += GS_SEC, GS_SEC), 0);
    ASSERT_STR(t.why,
               "Xid 95: uncontained ECC error; pages pending retirement (reset the GPU); row "
               "remapping failed");
    r = healthy();
    ASSERT_EQ(gsd_gpuh_judge(&t, &r, now += 2 * GS_SEC, GS_SEC), 1);
    ASSERT_EQ(t.bad, 0);
    /* one reading alone (gsched gpus) */
    char why[256];
    r.retire_pending = 1;
    ASSERT_EQ(gsd_gpu_reading_bad(&r, why, sizeof why), 1);
    ASSERT_STR(why, "pages pending retirement (reset the GPU)");
    r = healthy();
    r.retire_pending = r.remap_pending = r.remap_failure = -1; /* NVML does not say */
    ASSERT_EQ(gsd_gpu_reading_bad(&r, why, sizeof why), 0);
    ASSERT_STR(why, "");
}

static void xid_catalog(void)
{
    static const int crit[] = {48, 61, 62, 63, 64, 74, 79, 92, 94, 95, 119, 120, 140};
    for (size_t i = 0; i < sizeof crit / sizeof crit[0]; i++) ASSERT(gsd_xid_critical(crit[i]));
    static const int app[] = {0, 13, 31, 43, 45, 68, 69};
    for (size_t i = 0; i < sizeof app / sizeof app[0]; i++) ASSERT(!gsd_xid_critical(app[i]));
    ASSERT_STR(gsd_xid_critical(79), "GPU has fallen off the bus");
}

static const test_case tests[] = {
    {"xid_hold", xid_hold},
    {"ecc_base", ecc_base},
    {"conditions", conditions},
    {"xid_catalog", xid_catalog},
};

TEST_MAIN(tests)
