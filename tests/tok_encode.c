/* tok_encode.c — for check_tokenizer_node.mjs: reads a tokenizer.json (argv[1])
 * and lines of JSON strings on stdin; writes for each a JSON object per line:
 * {"ids": its ids with the special tokens, "text": those ids decoded (special
 * tokens kept)}, or {"error": message}. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/tokenizer/tokenizer.h"

int main(int argc, char **argv)
{
    attn_tokenizer *t;
    attn_error err;
    if (argc != 2) return 2;
    if (attn_tokenizer_load(argv[1], &t, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, stdin) > 0) {
        cJSON *s = cJSON_Parse(line);
        int *ids, n;
        if (!cJSON_IsString(s)) printf("{\"error\": \"not a JSON string\"}\n");
        else if (attn_tokenizer_encode(t, s->valuestring, true, &ids, &n, &err)) printf("{\"error\": \"%s\"}\n", err.msg);
        else {
            char *text = NULL;
            cJSON *o = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(o, "ids");
            for (int i = 0; i < n; i++) cJSON_AddItemToArray(arr, cJSON_CreateNumber(ids[i]));
            if (attn_tokenizer_decode(t, ids, n, false, &text, &err)) cJSON_AddStringToObject(o, "error", err.msg);
            else cJSON_AddStringToObject(o, "text", text);
            char *line_out = cJSON_PrintUnformatted(o);
            printf("%s\n", line_out);
            free(line_out);
            free(text);
            cJSON_Delete(o);
            free(ids);
        }
        cJSON_Delete(s);
    }
    free(line);
    attn_tokenizer_free(t);
    return 0;
}
