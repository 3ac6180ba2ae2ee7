// SPDX-License-Identifier: MIT
/*
 * The calibration kept per machine, so that a process does not pay 30
 * million instructions at start-up to learn what the last one learnt.
 *
 * A line of $METER_CACHE_DIR/calibration (default
 * $XDG_CACHE_HOME/meter/calibration, else ~/.cache/meter/calibration) is
 *
 *	KEY CALL_PS FLAT_PS PLAIN_PS
 *
 * and KEY names everything the figures depend on: the build of the code
 * that was timed (the GNU build-id of the object holding libmeter, which
 * changes with any change to libmeter or its compiler flags), the CPU (its
 * brand string and family/model/stepping), the kernel release (mitigations
 * change the cost of a call) and the mode (manual or automatic).  When the
 * machine changes, one of these does, the key is not found and the process
 * measures and adds its line; a file that does not parse is measured over.
 * (valgrind shows the program a CPU of its own).  What the key cannot name
 * (another clock speed, another machine of the same CPU) the speed check
 * of meter_calibrate.c catches with PLAIN_PS, the uninstrumented call.
 * Without a build-id, for a setuid program, or with METER_CACHE_DIR=off,
 * nothing is kept.  METER_CALIBRATE=1 measures anyway and replaces the line.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "meter_internal.h"

#define CACHE_BYTES	8192
#define CACHE_LINES	16	/* machines x modes sharing one home */
#define KEY_MAX		320
#define PS_MAX		1000000000ULL	/* 1 ms a call: not a measurement */

struct find_build {
	uintptr_t addr;
	char hex[2 * 64 + 1];
};

static void note_build_id(const struct dl_phdr_info *info,
			  const ElfW(Phdr) *ph, char *hex)
{
	const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
	const char *end = p + ph->p_memsz;
	size_t align = ph->p_align >= 8 ? 8 : 4;

	while (p + sizeof(ElfW(Nhdr)) <= end) {
		const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
		size_t name = (n->n_namesz + align - 1) & ~(align - 1);
		size_t desc = (n->n_descsz + align - 1) & ~(align - 1);
		const unsigned char *d;
		size_t i;

		p += sizeof(*n);
		if (p + name + desc > end || name + desc < name)
			return;
		d = (const unsigned char *)p + name;
		if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
		    !memcmp(p, "GNU", 4) && n->n_descsz && n->n_descsz <= 64) {
			for (i = 0; i < n->n_descsz; i++)
				sprintf(hex + 2 * i, "%02x", d[i]);
			return;
		}
		p += name + desc;
	}
}

static int find_build_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct find_build *fb = arg;
	bool here = false;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && fb->addr >= lo &&
		    fb->addr < lo + ph->p_memsz)
			here = true;
	}
	if (!here)
		return 0;
	for (i = 0; i < info->dlpi_phnum && !fb->hex[0]; i++)
		if (info->dlpi_phdr[i].p_type == PT_NOTE)
			note_build_id(info, &info->dlpi_phdr[i], fb->hex);
	return 1;
}

static void cpu_name(char *out, size_t len)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned int r[12], a, b, c, d, i;

	snprintf(out, len, "unknown");
	if (!__get_cpuid(1, &a, &b, &c, &d))
		return;
	for (i = 0; i < 3; i++)
		if (!__get_cpuid(0x80000002 + i, &r[4 * i], &r[4 * i + 1],
				 &r[4 * i + 2], &r[4 * i + 3]))
			r[4 * i] = r[4 * i + 1] = r[4 * i + 2] =
				r[4 * i + 3] = 0;
	snprintf(out, len, "%.48s/%08x", (const char *)r, a);
#else
	struct utsname u;

	snprintf(out, len, "%s", uname(&u) ? "unknown" : u.machine);
#endif
}

/* false when there is nothing to key on (no build-id) */
static bool make_key(bool automatic, char *key, size_t len)
{
	struct find_build fb = { .addr = (uintptr_t)meter_calibrate };
	char cpu[80];
	struct utsname u;
	char *c;

	dl_iterate_phdr(find_build_cb, &fb);
	if (!fb.hex[0] || uname(&u))
		return false;
	cpu_name(cpu, sizeof(cpu));
	snprintf(key, len, "build=%s|cpu=%s|kernel=%s|mode=%s", fb.hex, cpu,
		 u.release, automatic ? "auto" : "manual");
	for (c = key; *c; c++)
		if (*c <= ' ' || *c > '~')
			*c = '_';
	return true;
}

/* dir receives the directory, path the file; false: keep nothing */
static bool cache_path(char *dir, char *path, size_t len)
{
	const char *d = getenv("METER_CACHE_DIR");
	const char *x = getenv("XDG_CACHE_HOME");
	const char *h = getenv("HOME");

	if (getauxval(AT_SECURE))
		return false;
	if (d) {
		if (!*d || !strcmp(d, "off"))
			return false;
		snprintf(dir, len, "%s", d);
	} else if (x && x[0] == '/') {
		snprintf(dir, len, "%s/meter", x);
	} else if (h && h[0] == '/') {
		snprintf(dir, len, "%s/.cache/meter", h);
	} else {
		return false;
	}
	return snprintf(path, len, "%s/calibration", dir) < (int)len;
}

/* The file, NUL-terminated, in a malloc'd buffer; NULL if unreadable. */
static char *slurp(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	char *buf;
	ssize_t n;
	size_t got = 0;

	if (fd < 0)
		return NULL;
	buf = malloc(CACHE_BYTES + 1);
	while (buf && got < CACHE_BYTES) {
		n = read(fd, buf + got, CACHE_BYTES - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (buf)
		buf[got] = '\0';
	return buf;
}

/* A decimal from 1 to PS_MAX ending at stop; false otherwise. */
static bool parse_ps(const char *s, char stop, const char **next,
		     uint64_t *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	*v = strtoull(s, &end, 10);
	if (*end != stop || errno || !*v || *v > PS_MAX)
		return false;
	*next = end + (stop ? 1 : 0);
	return true;
}

/* One line "KEY PS FLAT PLAIN" (NUL-terminated); false if malformed. */
static bool parse_line(char *line, char **key, uint64_t v[3])
{
	char *sp = strchr(line, ' ');
	const char *p;

	if (!sp || sp == line || sp - line >= KEY_MAX)
		return false;
	*sp = '\0';
	*key = line;
	p = sp + 1;
	return parse_ps(p, ' ', &p, &v[0]) && parse_ps(p, ' ', &p, &v[1]) &&
	       parse_ps(p, '\0', &p, &v[2]);
}

bool meter_calib_cached(bool automatic, uint64_t *ps, uint64_t *flat_ps,
			uint64_t *plain_ps)
{
	char dir[512], path[512], want[KEY_MAX], *buf, *line, *save, *key;
	const char *force = getenv("METER_CALIBRATE");
	uint64_t v[3];
	bool found = false;

	if ((force && !strcmp(force, "1")) || !cache_path(dir, path,
							   sizeof(path)) ||
	    !make_key(automatic, want, sizeof(want)))
		return false;
	buf = slurp(path);
	if (!buf)
		return false;
	for (line = strtok_r(buf, "\n", &save); line && !found;
	     line = strtok_r(NULL, "\n", &save))
		if (parse_line(line, &key, v) && !strcmp(key, want)) {
			*ps = v[0];
			*flat_ps = v[1];
			*plain_ps = v[2];
			found = true;
		}
	free(buf);
	return found;
}

static void make_dirs(const char *dir)
{
	char d[512], *p;

	snprintf(d, sizeof(d), "%s", dir);
	for (p = d + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(d, 0700);
			*p = '/';
		}
	mkdir(d, 0700);
}

/*
 * Our line first, then up to CACHE_LINES - 1 well-formed lines of other
 * keys; written beside the file and renamed over it, so that a reader
 * sees the old file or the new one.
 */
void meter_calib_store(bool automatic, uint64_t ps, uint64_t flat_ps,
		       uint64_t plain_ps)
{
	char dir[512], path[512], tmp[560], want[KEY_MAX], *old, *line, *save;
	char *key;
	uint64_t v[3];
	FILE *f;
	int fd, kept = 1;

	if (!ps || !flat_ps || !plain_ps || ps > PS_MAX || flat_ps > PS_MAX ||
	    plain_ps > PS_MAX || !cache_path(dir, path, sizeof(path)) ||
	    !make_key(automatic, want, sizeof(want)))
		return;
	make_dirs(dir);
	snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		  0644);
	if (fd < 0)
		return;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(tmp);
		return;
	}
	fprintf(f, "%s %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", want, ps,
		flat_ps, plain_ps);
	old = slurp(path);
	for (line = old ? strtok_r(old, "\n", &save) : NULL;
	     line && kept < CACHE_LINES; line = strtok_r(NULL, "\n", &save))
		if (parse_line(line, &key, v) && strcmp(key, want)) {
			fprintf(f, "%s %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
				key, v[0], v[1], v[2]);
			kept++;
		}
	free(old);
	if (fclose(f) || rename(tmp, path))
		unlink(tmp);
}
