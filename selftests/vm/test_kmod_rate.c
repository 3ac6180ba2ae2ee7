// SPDX-License-Identifier: MIT
/*
 * Samples per CPU-second equal the requested rate within 5% at 100 Hz,
 * 1 kHz and 10 kHz (the period changed with SET_PERIOD between phases).
 */
#include "kmod_util.h"

int main(void)
{
	static const struct {
		uint64_t period_ns;
		uint64_t burn_ns;
	} phase[] = {
		{ 10000000, 1000000000 },	/* 100 Hz, 1 s: 100 samples */
		{ 1000000, 500000000 },		/* 1 kHz, 0.5 s */
		{ 100000, 300000000 },		/* 10 kHz, 0.3 s */
	};
	struct meter_profile *p;
	uint64_t cookie, burnt[3];
	struct meter_page *pg;
	struct meter_nl *nl;
	char err[256] = "";
	int i, ret;

	ku_plan(4);
	nl = ku_open();
	pg = ku_page();
	cookie = ku_register(nl, pg, phase[0].period_ns);
	ku_funcs(nl, 3);
	for (i = 0; i < 3; i++) {
		uint64_t t0;

		ret = meter_nl_set_period(nl, phase[i].period_ns, err,
					  sizeof(err));
		if (ret)
			ku_bail("set_period", ret, err);
		t0 = ku_thread_cpu_ns();
		ku_enter(pg, i + 1);
		ku_burn(phase[i].burn_ns);
		ku_leave(pg);
		burnt[i] = ku_thread_cpu_ns() - t0;
	}
	p = ku_profile(nl, cookie, 0);
	for (i = 0; i < 3; i++) {
		double want = 1e9 / phase[i].period_ns;
		double got = ku_self(p, i + 1) * 1e9 / burnt[i];

		ku_diag("%.0f Hz asked: %llu samples in %.3f CPU-s = %.1f per CPU-second",
			want, (unsigned long long)ku_self(p, i + 1),
			burnt[i] / 1e9, got);
		ku_ok(ku_abs(got - want) <= 0.05 * want,
		      "%.0f Hz gives %.0f samples per CPU-second (within 5%%)",
		      want, got);
	}
	ku_ok(p->period_ns == phase[2].period_ns,
	      "SET_PERIOD is the session's period");
	meter_profile_free(p);
	meter_nl_close(nl);
	return ku_exit();
}
