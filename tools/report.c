// SPDX-License-Identifier: MIT
/*
 * A profile as the report asked for (report.h): the model is put in one
 * row per name, corrected if asked, its idle threads set aside, analysed,
 * and handed to one renderer.  The analysis library computes; this, over
 * it, is where the tools choose what to print.
 */
#include <errno.h>
#include <string.h>

#include "idle.h"
#include "interval.h"
#include "report.h"

int render_profile(const struct meter_profile *p, const struct report_opts *o,
		   FILE *out, char *err, size_t errlen)
{
	struct meter_profile *copy = NULL, *idle = NULL;
	struct analysis *an;
	enum an_order def;
	bool failed = false;
	int ret;

	/* JSON keeps the samples as taken, and the costs that correct them */
	if (o->format == FMT_JSON) {
		ret = render_json(p, out);
		goto done;
	}
	/* a single profile: its interval is the whole run */
	if (o->format == FMT_TOP) {
		struct interval iv;

		if (interval_build(&iv, p, NULL, o->an.order)) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		ret = render_top(&iv, o, 0, out);
		interval_free(&iv);
		goto done;
	}
	/* one row per name; a correction's copy is merged so already */
	copy = o->correct ? profile_corrected_copy(p, &failed) : NULL;
	if (!copy && !failed)
		copy = meter_profile_by_name(p, &failed);
	if (failed) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (copy)
		p = copy;
	idle = o->hide_idle > 0 ? profile_without_idle(p, o->hide_idle,
						       &failed) : NULL;
	if (failed) {
		meter_profile_free(copy);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (idle)
		p = idle;
	switch (o->format) {
	case FMT_CALLGRAPH:
	case FMT_DOT:
		def = ORDER_TOPOLOGICAL;
		break;
	default:
		def = ORDER_SELF;
	}
	an = analysis_new(p, &o->an, def);
	if (!an) {
		meter_profile_free(idle);
		meter_profile_free(copy);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	switch (o->format) {
	case FMT_TEXT:
		ret = render_flat(an, o, out);
		if (!ret) {
			/* The call graph in its own default order. */
			struct analysis *cg;

			fputc('\n', out);
			cg = analysis_new(p, &o->an, ORDER_TOPOLOGICAL);
			if (!cg) {
				ret = -1;
				break;
			}
			ret = render_callgraph(cg, o, out);
			analysis_free(cg);
		}
		break;
	case FMT_FLAT:
		ret = render_flat(an, o, out);
		break;
	case FMT_CALLGRAPH:
		ret = render_callgraph(an, o, out);
		break;
	case FMT_METERING:
		ret = render_metering(an, o, out);
		break;
	case FMT_FOLDED:
		ret = render_folded(an, o, out);
		break;
	case FMT_PPROF:
		ret = render_pprof(an, o, out);
		break;
	case FMT_DOT:
		ret = render_dot(an, o, out);
		break;
	case FMT_HTML:
		ret = render_html(an, o, out);
		break;
	default:
		ret = -1;
		errno = EINVAL;
	}
	analysis_free(an);
done:
	meter_profile_free(idle);
	meter_profile_free(copy);
	if (!ret && (fflush(out) || ferror(out)))
		ret = -1;
	if (ret)
		snprintf(err, errlen, "cannot write the report: %s",
			 strerror(errno ? errno : EIO));
	return ret;
}

int parse_format(const char *s, enum report_format *out)
{
	static const struct {
		const char *name;
		enum report_format f;
	} formats[] = {
		{ "text", FMT_TEXT }, { "flat", FMT_FLAT },
		{ "callgraph", FMT_CALLGRAPH }, { "metering", FMT_METERING },
		{ "json", FMT_JSON }, { "folded", FMT_FOLDED },
		{ "pprof", FMT_PPROF }, { "dot", FMT_DOT },
		{ "top", FMT_TOP }, { "html", FMT_HTML },
	};
	size_t i;

	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		if (!strcmp(s, formats[i].name)) {
			*out = formats[i].f;
			return 0;
		}
	}
	return -1;
}

int parse_order(const char *s, enum an_order *out)
{
	if (!strcmp(s, "self"))
		*out = ORDER_SELF;
	else if (!strcmp(s, "total"))
		*out = ORDER_TOTAL;
	else if (!strcmp(s, "calls"))
		*out = ORDER_CALLS;
	else if (!strcmp(s, "name"))
		*out = ORDER_NAME;
	else if (!strcmp(s, "topological"))
		*out = ORDER_TOPOLOGICAL;
	else
		return -1;
	return 0;
}
