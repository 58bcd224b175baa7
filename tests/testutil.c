/*
 * testutil.c - shared test helpers (see testutil.h).
 */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gen.h"
#include "internal.h"
#include "testutil.h"

static char scratch[4096];
static pid_t scratch_owner;

/* Check runs each test in a forked child, which inherits atexit handlers:
 * only the process that made the directory removes it. */
static void remove_scratch(void)
{
	char cmd[4200];

	if (scratch[0] && getpid() == scratch_owner) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", scratch);
		if (system(cmd) != 0)
			fprintf(stderr, "cannot remove %s\n", scratch);
	}
}

char *tu_path(const char *name)
{
	char *p;

	if (!scratch[0]) {
		const char *tmp = getenv("TMPDIR");

		snprintf(scratch, sizeof(scratch), "%s/parload-test-XXXXXX",
			 tmp && *tmp ? tmp : "/tmp");
		ck_assert_ptr_nonnull(mkdtemp(scratch));
		scratch_owner = getpid();
		atexit(remove_scratch);
	}
	p = malloc(strlen(scratch) + strlen(name) + 2);
	ck_assert_ptr_nonnull(p);
	sprintf(p, "%s/%s", scratch, name);
	return p;
}

void tu_write_stream(const char *path, uint64_t views, uint32_t width,
		     uint32_t height, int pixel_type, uint32_t flags,
		     uint64_t seed)
{
	parload_file_header h;
	parload_error err;
	int rc;

	ck_assert_int_eq(parload_file_header_init(&h, views, width, height,
						  pixel_type, flags), 0);
	rc = pgen_write(path, &h, seed, &err);
	ck_assert_msg(rc == 0, "writing %s: %s", path, err.message);
}

void tu_write_shape(const char *path, const tu_shape *s, uint64_t seed)
{
	tu_write_stream(path, s->views, s->width, s->height, s->type, s->flags,
			seed);
}

void tu_write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	/* An empty file: fwrite may not be handed a NULL buffer. */
	if (len)
		ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

void tu_patch(const char *path, uint64_t offset, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, data, len, (off_t)offset), (ssize_t)len);
	close(fd);
}

void tu_truncate(const char *path, uint64_t len)
{
	ck_assert_int_eq(truncate(path, (off_t)len), 0);
}

void tu_flip(const char *path, uint64_t offset)
{
	unsigned char c;
	int fd = open(path, O_RDWR);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, &c, 1, (off_t)offset), 1);
	c ^= 0xff;
	ck_assert_int_eq(pwrite(fd, &c, 1, (off_t)offset), 1);
	close(fd);
}

unsigned char *tu_read_all(const char *path, size_t *len)
{
	struct stat st;
	unsigned char *b;
	int fd = open(path, O_RDONLY);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	*len = (size_t)st.st_size;
	b = malloc(*len + 1);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(pread(fd, b, *len, 0), (ssize_t)*len);
	close(fd);
	return b;
}

uint64_t tu_file_size(const char *path)
{
	struct stat st;

	ck_assert_int_eq(stat(path, &st), 0);
	return (uint64_t)st.st_size;
}

uint64_t tu_view_off(uint64_t payload_size, uint64_t v)
{
	return PARLOAD_FILE_HEADER_SIZE +
	       v * (PARLOAD_VIEW_HEADER_SIZE + payload_size);
}

uint64_t tu_payload_off(uint64_t payload_size, uint64_t v)
{
	return tu_view_off(payload_size, v) + PARLOAD_VIEW_HEADER_SIZE;
}

char *tu_crc_stream(const char *name, uint32_t flags)
{
	char *path = tu_path(name);

	tu_write_stream(path, TU_CRC_VIEWS, 33, 17, PARLOAD_PIXEL_U16, flags,
			5);
	return path;
}

void tu_buffers_new(parload_buffers *b, uint64_t views,
		    uint64_t payload_size)
{
	b->headers_size = views * PARLOAD_VIEW_HEADER_SIZE;
	b->pixels_size = views * payload_size;
	b->headers = malloc(b->headers_size);
	b->pixels = malloc(b->pixels_size);
	ck_assert(b->headers && b->pixels);
}

void tu_buffers_free(parload_buffers *b)
{
	free(b->headers);
	free(b->pixels);
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

int tu_serial_read(const char *path, tu_soa *out)
{
	FILE *f = fopen(path, "rb");
	int c;

	memset(out, 0, sizeof(*out));
	if (!f)
		return -1;
	if (fread(out->file_header, 1, 64, f) != 64)
		goto bad;
	out->view_count = get64(out->file_header + 16);
	out->payload_size = get64(out->file_header + 40);
	out->headers = malloc(out->view_count * 32 + 1);
	out->pixels = malloc(out->view_count * out->payload_size + 1);
	if (!out->headers || !out->pixels)
		goto bad;
	for (uint64_t i = 0; i < out->view_count; i++) {
		if (fread(out->headers + i * 32, 1, 32, f) != 32)
			goto bad;
		if (fread(out->pixels + i * out->payload_size, 1,
			  out->payload_size, f) != out->payload_size)
			goto bad;
	}
	c = fgetc(f);
	fclose(f);
	if (c != EOF) {
		tu_soa_free(out);
		return -1;
	}
	return 0;
bad:
	fclose(f);
	tu_soa_free(out);
	return -1;
}

void tu_soa_free(tu_soa *s)
{
	free(s->headers);
	free(s->pixels);
	memset(s, 0, sizeof(*s));
}

void tu_assert_same(const parload_dataset *ds, const tu_soa *ref)
{
	const parload_file_header h = tu_ds_header(ds);

	ck_assert_mem_eq(&h, ref->file_header, 64);
	ck_assert_uint_eq(ds->desc.count, ref->view_count);
	if (ref->view_count == 0)
		return;
	ck_assert_int_eq(memcmp(ds->headers, ref->headers,
				ref->view_count * 32), 0);
	ck_assert_int_eq(memcmp(ds->pixels, ref->pixels,
				ref->view_count * ref->payload_size), 0);
}

void tu_assert_prefix(const parload_dataset *ds, const tu_soa *ref,
		      uint64_t n, const char *what)
{
	ck_assert_msg(ds->desc.count == n,
		      "%s: %" PRIu64 " views, expected %" PRIu64, what,
		      ds->desc.count, n);
	if (n == 0)
		return;
	ck_assert_msg(memcmp(ds->headers, ref->headers, n * 32) == 0,
		      "%s: view headers differ", what);
	ck_assert_msg(memcmp(ds->pixels, ref->pixels,
			     n * ref->payload_size) == 0,
		      "%s: pixels differ", what);
}

void tu_assert_empty(const parload_dataset *ds, const char *what)
{
	ck_assert_msg(!ds->headers && !ds->pixels && !ds->bad_views &&
			      ds->bad_view_count == 0 &&
			      ds->desc.count == 0,
		      "%s: a failed load left a dataset behind", what);
}

void tu_assert_bad_views(const parload_dataset *ds, const uint64_t *want,
			 uint64_t n, const char *what)
{
	ck_assert_msg(ds->bad_view_count == n,
		      "%s: %" PRIu64 " bad views listed, expected %" PRIu64,
		      what, ds->bad_view_count, n);
	for (uint64_t k = 0; k < n; k++)
		ck_assert_msg(ds->bad_views[k] == want[k],
			      "%s: bad view %" PRIu64 " is %" PRIu64
			      ", expected %" PRIu64,
			      what, k, ds->bad_views[k], want[k]);
}

/* ---- streams: a thread writes bytes into a pipe or a socket ---- */

typedef struct feeder {
	int fd;
	const unsigned char *data;
	size_t len;
	size_t chunk; /* bytes per write() */
	pthread_t thread;
} feeder;

static void *feed(void *arg)
{
	feeder *f = arg;
	size_t done = 0;

	while (done < f->len) {
		size_t n = f->len - done < f->chunk ? f->len - done : f->chunk;
		ssize_t k = write(f->fd, f->data + done, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break; /* the reader stopped early (EPIPE) */
		done += (size_t)k;
	}
	close(f->fd);
	return NULL;
}

int tu_load_fed(parload_loader *l, const unsigned char *data, size_t len,
		size_t chunk, int via, const char *name, parload_dataset *ds,
		parload_error *err)
{
	return tu_load_fed_as(l, NULL, data, len, chunk, via, name, ds, err);
}

int tu_load_fed_as(parload_loader *l, const parload_desc *d,
		   const unsigned char *data, size_t len, size_t chunk,
		   int via, const char *name, parload_dataset *ds,
		   parload_error *err)
{
	parload_request r;
	feeder f;
	int fds[2], rc;

	signal(SIGPIPE, SIG_IGN);
	if (via == TU_VIA_SOCKET)
		ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
	else
		ck_assert_int_eq(pipe(fds), 0);
	if (via == TU_VIA_PIPE_NONBLOCK)
		ck_assert_int_eq(fcntl(fds[0], F_SETFL, O_NONBLOCK), 0);
	f.fd = fds[1];
	f.data = data;
	f.len = len;
	f.chunk = chunk;
	ck_assert_int_eq(pthread_create(&f.thread, NULL, feed, &f), 0);
	memset(err, 0, sizeof(*err));
	parload_request_init(&r);
	r.source.fd = fds[0];
	r.source.name = name;
	r.source.desc = d;
	rc = parload_loader_run(l, &r, ds, err);
	/* The reader is done: a writer still writing gets EPIPE. */
	close(fds[0]);
	ck_assert_int_eq(pthread_join(f.thread, NULL), 0);
	return rc;
}

/* ---- running a program ---- */

extern char **environ;

/* Whether entry ("NAME=value") names one of env's entries. */
static bool env_overridden(const char *entry, const char *const *env)
{
	size_t n = strcspn(entry, "=");

	for (; *env; env++)
		if (strcspn(*env, "=") == n && strncmp(*env, entry, n) == 0)
			return true;
	return false;
}

/* This process's environment with env's entries set or unset; the
 * array is the caller's to free, its strings are not. */
static char **make_env(const char *const *env)
{
	size_t n = 0, k = 0, extra = 0;
	char **out;

	while (environ[n])
		n++;
	while (env[extra])
		extra++;
	out = malloc((n + extra + 1) * sizeof(*out));
	ck_assert_ptr_nonnull(out);
	for (size_t i = 0; i < n; i++)
		if (!env_overridden(environ[i], env))
			out[k++] = environ[i];
	for (size_t i = 0; i < extra; i++)
		if (strchr(env[i], '='))
			out[k++] = (char *)env[i];
	out[k] = NULL;
	return out;
}

/* Standard stream fd: path if given, else a fresh capture file in dir
 * (its path in *capture). */
static void add_output(posix_spawn_file_actions_t *fa, int fd,
		       const char *path, const char *dir, const char *name,
		       char **capture)
{
	*capture = NULL;
	if (!path) {
		static unsigned serial; /* two at once get two files */
		char base[64];

		snprintf(base, sizeof(base), ".%s.%ld.%u", name,
			 (long)getpid(), serial++);
		if (dir) {
			*capture = malloc(strlen(dir) + strlen(base) + 2);
			ck_assert_ptr_nonnull(*capture);
			sprintf(*capture, "%s/%s", dir, base);
		} else {
			*capture = tu_path(base);
		}
		path = *capture;
	}
	posix_spawn_file_actions_addopen(fa, fd, path,
					 O_WRONLY | O_CREAT | O_TRUNC, 0600);
}

/* Signals as a shell's foreground job has them. */
static void foreground_signals(posix_spawnattr_t *attr)
{
	sigset_t def, none;

	posix_spawnattr_init(attr);
	sigemptyset(&def);
	sigaddset(&def, SIGINT);
	sigaddset(&def, SIGTERM);
	sigaddset(&def, SIGPIPE);
	sigemptyset(&none);
	posix_spawnattr_setsigdefault(attr, &def);
	posix_spawnattr_setsigmask(attr, &none);
	posix_spawnattr_setflags(attr, POSIX_SPAWN_SETSIGDEF |
					       POSIX_SPAWN_SETSIGMASK);
}

void tu_spawn(const tu_cmd *c, tu_proc *p)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	int fds[2] = { -1, -1 }, rc;
	char **envp = c->env ? make_env(c->env) : environ;

	memset(p, 0, sizeof(*p));
	p->in = -1;
	p->timeout = c->timeout;
	signal(SIGPIPE, SIG_IGN);
	posix_spawn_file_actions_init(&fa);
	if (c->in_pipe) {
		ck_assert_int_eq(pipe(fds), 0);
		posix_spawn_file_actions_adddup2(&fa, fds[0], 0);
		posix_spawn_file_actions_addclose(&fa, fds[0]);
		posix_spawn_file_actions_addclose(&fa, fds[1]);
	} else {
		posix_spawn_file_actions_addopen(&fa, 0,
						 c->in ? c->in : "/dev/null",
						 O_RDONLY, 0);
	}
	add_output(&fa, 1, c->out, c->dir, "stdout", &p->out_path);
	add_output(&fa, 2, c->err, c->dir, "stderr", &p->err_path);
	foreground_signals(&attr);
	rc = posix_spawn(&p->pid, c->argv[0], &fa, &attr,
			 (char *const *)c->argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (envp != environ)
		free(envp);
	if (c->in_pipe) {
		close(fds[0]);
		p->in = fds[1];
	}
	ck_assert_msg(rc == 0, "posix_spawn %s: %s", c->argv[0], strerror(rc));
}

/* A capture's text, or "" for none. */
static char *read_capture(const char *path, size_t *len)
{
	char *b;

	if (!path) {
		*len = 0;
		b = calloc(1, 1);
		ck_assert_ptr_nonnull(b);
		return b;
	}
	b = (char *)tu_read_all(path, len);
	b[*len] = '\0';
	return b;
}

char *tu_err_so_far(const tu_proc *p)
{
	size_t len;

	return read_capture(p->err_path, &len);
}

/* r from the wait status ws, and the captures. */
static void collect(tu_proc *p, int ws, tu_result *r)
{
	r->signal = WIFSIGNALED(ws) ? WTERMSIG(ws) : 0;
	r->status = r->signal ? 128 + r->signal : WEXITSTATUS(ws);
	r->out = read_capture(p->out_path, &r->out_len);
	r->err = read_capture(p->err_path, &r->err_len);
	if (p->in >= 0)
		close(p->in);
	p->in = -1;
	if (p->out_path)
		unlink(p->out_path);
	if (p->err_path)
		unlink(p->err_path);
	free(p->out_path);
	free(p->err_path);
	p->out_path = p->err_path = NULL;
}

bool tu_ended(tu_proc *p, tu_result *r)
{
	int ws;
	pid_t got = waitpid(p->pid, &ws, WNOHANG);

	ck_assert_int_ge(got, 0);
	if (got == 0)
		return false;
	collect(p, ws, r);
	return true;
}

static double seconds_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void tu_wait(tu_proc *p, tu_result *r)
{
	const struct timespec nap = { 0, 2 * 1000 * 1000 };
	double deadline = seconds_now() + p->timeout;
	int ws;

	if (p->timeout <= 0) {
		ck_assert_int_eq(waitpid(p->pid, &ws, 0), p->pid);
		collect(p, ws, r);
		return;
	}
	while (!tu_ended(p, r)) {
		if (seconds_now() > deadline) {
			kill(p->pid, SIGKILL);
			waitpid(p->pid, &ws, 0);
			ck_abort_msg("%ld still running after %g s: killed",
				     (long)p->pid, p->timeout);
		}
		nanosleep(&nap, NULL);
	}
}

void tu_run_cmd(const tu_cmd *c, tu_result *r)
{
	tu_proc p;

	tu_spawn(c, &p);
	tu_wait(&p, r);
}

void tu_result_free(tu_result *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

int tu_add_options(const char **args, int n, const char *const *names,
		   const char *const *values, int count)
{
	for (int i = 0; i < count; i++) {
		if (!values[i])
			continue;
		args[n++] = names[i];
		args[n++] = values[i];
	}
	return n;
}

bool tu_feed(int fd, const void *data, size_t len)
{
	const char *b = data;

	while (len) {
		ssize_t k = write(fd, b, len);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		b += k;
		len -= (size_t)k;
	}
	return true;
}

const char *tu_parload_bin(void)
{
	const char *bin = getenv("PARLOAD_BIN");

	return bin && *bin ? bin : NULL;
}

int tu_skip(const char *prog, const char *why)
{
	printf("%s: skipped: %s\n", prog, why);
	fflush(stdout);
	return 77;
}

/* ---- the process ---- */

int tu_count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

bool tu_under_valgrind(void)
{
	const char *p = getenv("LD_PRELOAD");

	return p && strstr(p, "vgpreload");
}

TCase *tu_tcase(Suite *s, const char *name, double timeout)
{
	TCase *t = tcase_create(name);

	if (timeout > 0)
		tcase_set_timeout(t, timeout);
	suite_add_tcase(s, t);
	return t;
}

int tu_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* ---------------------------------------------------------------------
 * The one door (parload_loader_run), as the tests call it
 * ------------------------------------------------------------------- */

parload_loader *tu_loader(unsigned threads, int strategy, unsigned flags)
{
	parload_options o;
	parload_loader *l;
	parload_error err;

	parload_options_init(&o);
	o.threads = threads;
	o.strategy = (parload_strategy)strategy;
	o.flags = flags | PARLOAD_OPT_NO_BIND;
	ck_assert_msg(parload_loader_new(&l, &o, &err) == 0, "%s",
		      err.message);
	return l;
}

int tu_load(parload_loader *l, const char *path, const parload_selection *sel,
	    const parload_buffers *into, parload_dataset *ds,
	    parload_error *err)
{
	parload_request r;

	parload_request_init(&r);
	r.source.path = path;
	r.selection = sel;
	r.into = into;
	return parload_loader_run(l, &r, ds, err);
}

int tu_load_fd(parload_loader *l, int fd, const char *name,
	       parload_dataset *ds, parload_error *err)
{
	parload_request r;

	parload_request_init(&r);
	r.source.fd = fd;
	r.source.name = name;
	return parload_loader_run(l, &r, ds, err);
}

parload_file_header tu_ds_header(const parload_dataset *ds)
{
	const parload_desc *d = &ds->desc;
	parload_file_header h;

	memset(&h, 0, sizeof(h));
	if (d->format == PARLOAD_FORMAT_PARLOAD && d->width)
		ck_assert_int_eq(parload_file_header_init(
					 &h, d->count, d->width, d->height,
					 d->pixel_type,
					 (d->flags & PARLOAD_DESC_CRC32C) ?
						 PARLOAD_FLAG_CRC32C : 0),
				 0);
	return h;
}

int tu_buffers_alloc(parload_buffers *b, const parload_file_header *h,
		     const parload_selection *sel, unsigned flags,
		     parload_error *err)
{
	parload_desc d;

	parload_desc_from_header(&d, h);
	return parload_buffers_alloc(b, &d, sel, flags, err);
}

int tu_resolve(const parload_file_header *h, const parload_selection *sel,
	       parload_shape *out, parload_error *err)
{
	parload_desc d;

	parload_desc_from_header(&d, h);
	return parload_selection_resolve(&d, sel, out, err);
}

/* The plan's description and file live as long as the test that made
 * the plan (Check runs one test per process). */
static parload_desc plan_desc;
static parload__file plan_file;

void tu_plan_init(struct parload__plan *p, const parload_file_header *h,
		  const parload_shape *s, void *headers, void *pixels)
{
	parload_desc_from_header(&plan_desc, h);
	memset(&plan_file, 0, sizeof(plan_file));
	plan_file.fd = -1;
	plan_file.views = h->view_count;
	parload__plan_init(p, &plan_desc, &plan_file, 1, false, s);
	parload__plan_views(p, 0, s->views, headers, NULL, pixels);
}

uint64_t tu_readahead_reach(const char *path)
{
	parload__file f;
	uint64_t reach;

	memset(&f, 0, sizeof(f));
	f.path = path;
	f.fd = open(path, O_RDONLY);
	ck_assert_msg(f.fd >= 0, "%s: %s", path, strerror(errno));
	reach = parload__readahead_reach(&f);
	close(f.fd);
	return reach;
}

int tu_run_part(const tu_part *parts, int n, int k)
{
	const char *why;

	if (k < 0 || k >= n) {
		fprintf(stderr, "no part %d of %d\n", k, n);
		return 99;
	}
	why = parts[k].why_not ? parts[k].why_not() : NULL;
	if (why) {
		printf("%s: SKIP: %s\n", parts[k].program, why);
		return 77;
	}
	return tu_run(parts[k].suite());
}

const char *tu_why_no_rlimit(void)
{
#ifdef PARLOAD_SANITIZED
	return "the sanitizers own the address space (configure "
	       "--enable-sanitizers)";
#else
	if (getenv("PARLOAD_TEST_NO_RLIMIT"))
		return "PARLOAD_TEST_NO_RLIMIT is set (make check-valgrind: "
		       "valgrind maps its own memory)";
	return NULL;
#endif
}

uint64_t tu_status_kib(const char *field)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	unsigned long long v = 0;
	size_t n = strlen(field);

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, field, n) == 0 && line[n] == ':')
			v = strtoull(line + n + 1, NULL, 10);
	fclose(f);
	return v;
}
