/* json.h — what cJSON leaves to its caller: keys given twice, and a value's
 * kind named in a message.
 *
 * cJSON keeps every member of an object, so {"rope_theta": 1e6, "rope_theta":
 * 10000} has two and cJSON_GetObjectItem finds the first, where Python's json
 * keeps the last: the same file would mean one model here and another in
 * transformers. A file that says a thing twice is refused instead. */
#ifndef ATTN_JSON_H
#define ATTN_JSON_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "engine/base/error.h"

/* Parses text[0..len) as one JSON value under the rule every file attnlab
 * reads is held to: the value and nothing after it but blanks (two
 * concatenated objects are refused, not read as the first), no string that
 * holds U+0000 (cJSON would cut it there: "model.norm.weight\u0000 renamed"
 * read as "model.norm.weight"), and no key given twice in any object
 * (attn_json_unique_keys). ATTN_OK and *out (cJSON_Delete it), or
 * ATTN_ERR_FORMAT and *out NULL, with one of
 *   "not valid JSON (at byte N)"
 *   "data after the JSON value, at byte N of LEN"
 *   "a key holds a NUL character (\u0000) at byte N, ..." (or "a string")
 *   "key 'K' appears twice [in W]"
 * unprefixed: the caller names the file. */
attn_status attn_json_parse(const char *text, size_t len, cJSON **out, attn_error *err);

/* Checks every object in v, at any depth, for a key given twice: ATTN_OK, or
 * ATTN_ERR_FORMAT with "key 'K' appears twice" (and "in W", W naming the
 * object: "rope_scaling", "added_tokens[3]"). Sorts each object's keys:
 * n log n, for a vocabulary of 200,000 tokens too. */
attn_status attn_json_unique_keys(const cJSON *v, attn_error *err);

/* v's kind as a message says it: "a string", "a number", "a boolean",
 * "null", "a list", "an object" ("nothing" for NULL). */
const char *attn_json_kind(const cJSON *v);

/* A value of the wrong kind: ATTN_ERR_FORMAT with "'NAME' must be WANT, not
 * KIND", a string's text quoted ("not a string (\"10000\")"). Read as the
 * default instead, such a value would silently mean something else. */
attn_status attn_json_wrong(const char *name, const char *want, const cJSON *v, attn_error *err);

/* o's member key, true or false: def when absent; any other kind (the string
 * "true", 1, null) is attn_json_wrong, the key called name. */
attn_status attn_json_bool(const cJSON *o, const char *key, const char *name, bool def, bool *out, attn_error *err);

#endif
