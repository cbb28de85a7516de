/* tok_encode.c — for check_tokenizer_node.mjs: reads a tokenizer.json (argv[1])
 * and lines of JSON strings on stdin; writes each one's ids (with the special
 * tokens) as a JSON array per line, or {"error": message}. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokenizer.h"

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
            putchar('[');
            for (int i = 0; i < n; i++) printf("%s%d", i ? "," : "", ids[i]);
            printf("]\n");
            free(ids);
        }
        cJSON_Delete(s);
    }
    free(line);
    attn_tokenizer_free(t);
    return 0;
}
