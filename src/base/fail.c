/*
 * fail.c - the variadic doors to parload__vfail (errors.c), which makes
 * every message, and the escaping of names in messages (parload__escape,
 * which parload__vfail uses for the whole message, and parload__quote for
 * a name a message quotes).  Compiled into the library and into each
 * module (module.c), whose parload__vfail is the library's, through the
 * host table (module_host.c).
 */
#include "base/base.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

int parload__fail(parload_error *err, int code, int sys_errno,
		  const char *path, uint64_t view, uint64_t offset,
		  const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	parload__vfail(err, code, sys_errno, path, view, offset, fmt, ap);
	va_end(ap);
	return code;
}

int parload__fail_path(parload_error *err, int code, int sys_errno,
		       const char *path, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	parload__vfail(err, code, sys_errno, path, PARLOAD_NONE, PARLOAD_NONE,
		       fmt, ap);
	va_end(ap);
	return code;
}

int parload__fail_nomem(parload_error *err, const char *path)
{
	return parload__fail_path(err, PARLOAD_ENOMEM, ENOMEM, path, NULL);
}

/* ---- names in messages ---- */

size_t parload__utf8(const unsigned char *s, size_t n, uint32_t *cp)
{
	size_t len;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, *cp = s[0] & 0x1fu;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, *cp = s[0] & 0x0fu;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, *cp = s[0] & 0x07u;
	else
		return 0;
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		*cp = *cp << 6 | (s[i] & 0x3fu);
	}
	if ((len == 3 && *cp < 0x800) || (len == 4 && *cp < 0x10000) ||
	    *cp > 0x10ffff || (*cp >= 0xd800 && *cp <= 0xdfff))
		return 0;
	return len;
}

/* The length of the UTF-8 character s starts with (s[0] >= 0x80), when it
 * is well formed and one a terminal prints; 0 otherwise (a byte of it is
 * escaped then): C1 controls, the line and paragraph separators and the
 * marks and overrides that reorder text on screen are escaped as control
 * bytes are. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	uint32_t cp;
	const size_t len = parload__utf8(s, n, &cp);

	if (!len || cp < 0xa0 || cp == 0x200e || cp == 0x200f ||
	    (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069))
		return 0;
	return len;
}

/* The first character of s[0..n): the bytes it takes (returned) and its
 * form in a message, out[0..*k). */
static size_t unit(const unsigned char *s, size_t n, char out[4], size_t *k)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned c = s[0];
	const size_t len = c >= 0x80 ? utf8_len(s, n) : 0;

	if ((c >= 0x20 && c < 0x7f) || len) {
		*k = len ? len : 1;
		memcpy(out, s, *k);
		return *k;
	}
	out[0] = '\\';
	if (c == '\n' || c == '\t' || c == '\r') {
		out[1] = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
		*k = 2;
		return 1;
	}
	out[1] = 'x';
	out[2] = hex[c >> 4];
	out[3] = hex[c & 15];
	*k = 4;
	return 1;
}

size_t parload__escaped_len(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t total = 0, k;
	char u[4];

	for (size_t i = 0; i < len; total += k)
		i += unit(p + i, len - i, u, &k);
	return total;
}

size_t parload__escape(char *dst, size_t size, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	const size_t total = parload__escaped_len(s, len);
	size_t room, head, i = 0, w = 0, done = 0, b, k;
	char u[4];

	if (size == 0)
		return 0;
	room = size - 1;
	/* Too long: the first half and the last, "..." between. */
	head = total <= room || room < 5 ? room : (room - 3) / 2;
	for (; i < len; i += b, w += k, done += k) {
		b = unit(p + i, len - i, u, &k);
		if (w + k > head)
			break;
		memcpy(dst + w, u, k);
	}
	if (i < len && room >= 5) {
		memcpy(dst + w, "...", 3);
		w += 3;
		for (; total - done > room - w; i += b, done += k)
			b = unit(p + i, len - i, u, &k);
		for (; i < len; i += b, w += k) {
			b = unit(p + i, len - i, u, &k);
			memcpy(dst + w, u, k);
		}
	}
	dst[w] = '\0';
	return w;
}

const char *parload__quote(char *buf, size_t size, const char *s, size_t n)
{
	if (!s)
		s = "(none)", n = SIZE_MAX;
	(void)parload__escape(buf, size, s, strnlen(s, n));
	return buf;
}
