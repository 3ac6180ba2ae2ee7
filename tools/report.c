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

/*
 * The profile the report shows: one row per name (a correction's copy is
 * merged so already), the idle threads set aside.  *copy and *idle hold
 * what was made (NULL: nothing); NULL on ENOMEM.
 */
static const struct meter_profile *
report_profile(const struct meter_profile *p, const struct report_opts *o,
	       struct meter_profile **copy, struct meter_profile **idle)
{
	bool failed = false;

	*copy = profile_attributed_copy(p, o->attrib, &failed);
	if (!*copy && !failed)
		*copy = meter_profile_by_name(p, &failed);
	if (failed)
		return NULL;
	if (*copy)
		p = *copy;
	*idle = o->hide_idle > 0 ? profile_without_idle(p, o->hide_idle,
							&failed) : NULL;
	if (failed)
		return NULL;
	return *idle ? *idle : p;
}

/* The flat profile, then the call graph in its own default order. */
static int render_text(const struct analysis *an, const struct report_opts *o,
		       FILE *out)
{
	struct analysis *cg;
	int ret = render_flat(an, o, out);

	if (ret)
		return ret;
	fputc('\n', out);
	cg = analysis_new(an->p, &o->an, ORDER_TOPOLOGICAL);
	if (!cg)
		return -1;
	ret = render_callgraph(cg, o, out);
	analysis_free(cg);
	return ret;
}

/* One of the renderers over an analysis. */
static int render_analysis(const struct analysis *an,
			   const struct report_opts *o, FILE *out)
{
	switch (o->format) {
	case FMT_TEXT:
		return render_text(an, o, out);
	case FMT_FLAT:
		return render_flat(an, o, out);
	case FMT_CALLGRAPH:
		return render_callgraph(an, o, out);
	case FMT_METERING:
		return render_metering(an, o, out);
	case FMT_FOLDED:
		return render_folded(an, o, out);
	case FMT_PPROF:
		return render_pprof(an, o, out);
	case FMT_DOT:
		return render_dot(an, o, out);
	case FMT_HTML:
		return render_html(an, o, out);
	default:
		errno = EINVAL;
		return -1;
	}
}

/* JSON keeps the samples as taken; top's interval is the whole run. */
static int render_raw(const struct meter_profile *p,
		      const struct report_opts *o, FILE *out)
{
	struct interval iv;
	int ret;

	if (o->format == FMT_JSON)
		return render_json(p, out);
	if (interval_build(&iv, p, NULL, o->an.order))
		return -1;
	ret = render_top(&iv, o, 0, out);
	interval_free(&iv);
	return ret;
}

int render_profile(const struct meter_profile *p, const struct report_opts *o,
		   FILE *out, char *err, size_t errlen)
{
	struct meter_profile *copy = NULL, *idle = NULL;
	const struct meter_profile *shown;
	struct analysis *an;
	int ret = -1;

	errno = 0;
	if (o->format == FMT_JSON || o->format == FMT_TOP) {
		ret = render_raw(p, o, out);
		goto done;
	}
	shown = report_profile(p, o, &copy, &idle);
	an = shown ? analysis_new(shown, &o->an,
				  o->format == FMT_CALLGRAPH ||
				  o->format == FMT_DOT ? ORDER_TOPOLOGICAL :
							 ORDER_SELF) : NULL;
	if (!an) {
		meter_profile_free(idle);
		meter_profile_free(copy);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	ret = render_analysis(an, o, out);
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
