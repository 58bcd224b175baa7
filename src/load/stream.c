/*
 * stream.c - the pull form of batch delivery (parload_stream_*): the load
 * runs with an on_batch of its own on a thread of its own, and each
 * parload_stream_next() takes the batch that callback hands over.  The
 * callback waits until the caller asks for the next batch (the one it
 * handed over stays valid until then), while the workers read the batch
 * after it.
 */
#include "load/load.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

struct parload_stream {
	parload_loader *loader;
	parload_request req;
	parload_dataset ds;
	parload_error err;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	parload_batch batch;
	bool have;      /* a batch handed over and not yet released */
	bool taken;     /* ... and given to the caller */
	bool closing;   /* the caller wants no more */
	bool finished;  /* the load has returned */
	int rc;         /* its result */
	volatile int cancel; /* the request's cancel: set by close */
};

static int hand_over(const parload_batch *b, void *arg)
{
	parload_stream *s = arg;
	bool stop;

	pthread_mutex_lock(&s->lock);
	s->batch = *b;
	s->have = true;
	s->taken = false;
	pthread_cond_broadcast(&s->cond);
	while (s->have && !s->closing)
		pthread_cond_wait(&s->cond, &s->lock);
	stop = s->closing;
	pthread_mutex_unlock(&s->lock);
	return stop;
}

static void *load_main(void *arg)
{
	parload_stream *s = arg;
	int rc = parload_loader_run(s->loader, &s->req, &s->ds, &s->err);

	pthread_mutex_lock(&s->lock);
	s->rc = rc;
	s->finished = true;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

int parload_stream_open(parload_stream **out, parload_loader *loader,
			const parload_request *req, parload_error *err)
{
	parload_stream *s;
	int e;

	if (!out || !loader || !req || req->on_batch)
		return parload__fail_path(err, PARLOAD_EINVAL, 0,
					  req ? req->source.path : NULL,
					  "a stream needs a loader and a "
					  "request without on_batch");
	if (req->on_wait)
		return parload__fail_path(err, PARLOAD_EINVAL, 0,
					  req->source.path,
					  "a stream's load runs on a thread of "
					  "its own: on_wait would not run on "
					  "the caller's; the caller waits in "
					  "parload_stream_next");
	*out = NULL;
	s = parload__sys_calloc(1, sizeof(*s));
	if (!s)
		return parload__fail_nomem(err, req->source.path);
	s->loader = loader;
	s->req = *req;
	s->req.on_batch = hand_over;
	s->req.batch_arg = s;
	/* A load waiting for a file that grows sees close at once. */
	if (!s->req.cancel)
		s->req.cancel = &s->cancel;
	if ((e = parload__sys_pthread_mutex_init(&s->lock, NULL)) != 0)
		goto fail_lock;
	if ((e = parload__sys_pthread_cond_init(&s->cond, NULL)) != 0)
		goto fail_cond;
	if ((e = parload__sys_pthread_create(&s->thread, NULL, load_main, s)))
		goto fail_thread;
	*out = s;
	return 0;
fail_thread:
	parload__sys_pthread_cond_destroy(&s->cond);
fail_cond:
	parload__sys_pthread_mutex_destroy(&s->lock);
fail_lock:
	parload__sys_free(s);
	return parload__fail_path(err, PARLOAD_ETHREAD, e, req->source.path,
				  "cannot start the stream's thread");
}

int parload_stream_next(parload_stream *s, parload_batch *batch,
			parload_error *err)
{
	int rc;

	if (!s || !batch)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, NULL,
					  "no stream or no batch");
	pthread_mutex_lock(&s->lock);
	/* Release the batch the caller had: the load goes on. */
	if (s->have && s->taken) {
		s->have = false;
		pthread_cond_broadcast(&s->cond);
	}
	while (!(s->have && !s->taken) && !s->finished)
		pthread_cond_wait(&s->cond, &s->lock);
	if (s->have && !s->taken) {
		*batch = s->batch;
		s->taken = true;
		rc = 1;
	} else {
		rc = s->rc;
		if (rc && err)
			*err = s->err;
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int parload_stream_close(parload_stream *s, parload_dataset *out)
{
	int rc;

	if (out)
		memset(out, 0, sizeof(*out));
	if (!s)
		return PARLOAD_EINVAL;
	pthread_mutex_lock(&s->lock);
	/* The caller holds the last batch: every view was delivered, and
	 * releasing it lets the load finish.  Anything else ends it early. */
	if (s->have && s->taken &&
	    s->batch.views_done == s->batch.views_total)
		s->have = false;
	else {
		s->closing = true;
		__atomic_store_n(&s->cancel, 1, __ATOMIC_RELAXED);
	}
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	parload__sys_pthread_join(s->thread, NULL);
	rc = s->rc;
	if (rc == 0 && out)
		*out = s->ds;
	else
		parload_dataset_free(&s->ds);
	parload__sys_pthread_cond_destroy(&s->cond);
	parload__sys_pthread_mutex_destroy(&s->lock);
	parload__sys_free(s);
	return rc;
}
