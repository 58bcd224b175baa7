/*
 * compat.h - the selection, request and name calls of parload.h that this
 * version of libparload does not have yet, reduced to whole-file loads so
 * that the module builds and runs against it.  Included only when
 * parload.h lacks them (no PARLOAD_OMIT).
 */
#define PARLOAD_OMIT INT64_MIN
#define PARLOAD_COMPAT_ 1

typedef struct parload_slice {
	int64_t start, stop, step;
} parload_slice;

typedef enum parload_layout {
	PARLOAD_LAYOUT_VIEWS = 0,
	PARLOAD_LAYOUT_SINOGRAMS = 1
} parload_layout;

typedef struct parload_selection {
	parload_slice views, rows, cols;
	parload_layout layout;
} parload_selection;

typedef struct parload_shape {
	uint64_t views, view_start, view_step;
	uint32_t row_start, rows, col_start, cols;
	parload_layout layout;
	uint32_t bytes_per_pixel;
	uint64_t view_bytes;
} parload_shape;

static void parload_selection_init(parload_selection *sel)
{
	parload_slice all = {PARLOAD_OMIT, PARLOAD_OMIT, 1};

	sel->views = sel->rows = sel->cols = all;
	sel->layout = PARLOAD_LAYOUT_VIEWS;
}

static const char *parload_layout_name(int layout)
{
	return layout == 0 ? "views" : layout == 1 ? "sinograms" : NULL;
}

static int parload_layout_from_name(const char *name)
{
	return strcmp(name, "views") == 0 ? 0 :
	       strcmp(name, "sinograms") == 0 ? 1 : -1;
}

static int compat_whole_(const parload_slice *s)
{
	return (s->start == PARLOAD_OMIT || s->start == 0) &&
	       s->stop == PARLOAD_OMIT && s->step == 1;
}

static int parload_selection_resolve(const parload_file_header *h,
				     const parload_selection *sel,
				     parload_shape *out, parload_error *err)
{
	if (sel && (!compat_whole_(&sel->views) || !compat_whole_(&sel->rows) ||
		    !compat_whole_(&sel->cols) || sel->layout)) {
		if (err) {
			memset(err, 0, sizeof(*err));
			err->code = PARLOAD_EINVAL;
			err->view = err->offset = PARLOAD_NONE;
			snprintf(err->message, sizeof(err->message),
				 "selections need a newer libparload");
		}
		return PARLOAD_EINVAL;
	}
	memset(out, 0, sizeof(*out));
	out->views = h->view_count;
	out->view_step = 1;
	out->rows = h->height;
	out->cols = h->width;
	out->bytes_per_pixel = h->bytes_per_pixel;
	out->view_bytes = h->payload_size;
	return 0;
}

static const char *const compat_strategies_[] = {
	"parallel", "bulk", "sequential", "two-pass", "mmap",
};

static const char *parload_strategy_name(int s)
{
	return s >= 0 && s < 5 ? compat_strategies_[s] : NULL;
}

static int parload_strategy_from_name(const char *name)
{
	for (int i = 0; i < 5; i++)
		if (strcmp(name, compat_strategies_[i]) == 0)
			return i;
	return -1;
}

static const char *parload_io_name(int io)
{
	return io == 0 ? "posix" : io == 1 ? "stdio" : NULL;
}

static int parload_io_from_name(const char *name)
{
	return strcmp(name, "posix") == 0 ? 0 :
	       strcmp(name, "stdio") == 0 ? 1 : -1;
}

typedef struct parload_request {
	const char *path;
	int fd;
	const char *name;
	const parload_selection *selection;
	const parload_buffers *into;
} parload_request;

static void parload_request_init(parload_request *req)
{
	memset(req, 0, sizeof(*req));
	req->fd = -1;
}

static int parload_loader_run(parload_loader *l, const parload_request *req,
			      parload_dataset *out, parload_error *err)
{
	parload_file_header h;
	parload_shape s;

	memset(&h, 0, sizeof(h));
	if (parload_selection_resolve(&h, req->selection, &s, err))
		return PARLOAD_EINVAL;
	if (req->into)
		return parload_loader_load_into(l, req->path, req->into, out,
						err);
	if (!req->path)
		return parload_loader_load_fd(l, req->fd, req->name, out, err);
	return parload_loader_load(l, req->path, out, err);
}

static int parload_buffers_alloc_select(parload_buffers *out,
					const parload_file_header *h,
					const parload_selection *sel,
					unsigned flags, parload_error *err)
{
	parload_shape s;

	if (parload_selection_resolve(h, sel, &s, err))
		return PARLOAD_EINVAL;
	return parload_buffers_alloc(out, h, flags, err);
}
