/* test_json.c — the one JSON rule (json.h) for every file a model folder
 * holds: data after the value, a key holding a NUL and a key given twice are
 * refused, naming the file; blanks after the value are no data. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "engine/model/model.h"
#include "model_tests_fixture.h"

/* One JSON rule for every file a model folder holds (issue 37): data after
 * the value (two concatenated objects), a key that holds a NUL (cJSON cut
 * "model.norm.weight\u0000 renamed" to "model.norm.weight", a tensor the
 * model wants) and a key given twice are refused, naming the file. */
static void test_one_json_rule(void **state)
{
    (void)state;
    const char *dir = model_dir("rule");
    static const struct { const char *file, *from, *to, *msg; } CASES[] = {
        {"config.json", "\"eos_token_id\":2}", "\"eos_token_id\":2}\n{\"num_hidden_layers\":9}",
         "config.json: data after the JSON value"},
        {"config.json", "\"hidden_size\":", "\"hidden\\u0000_size\":", "config.json: a key holds a NUL character"},
        {"tokenizer.json", "\"decoder\":null,", "\"decoder\":null,\"decoder\":null,", "key 'decoder' appears twice"},
        {"tokenizer.json", "\"ran\":11}}}", "\"ran\":11}}} {}", "tokenizer.json: data after the JSON value"},
        {"model.safetensors", "\"model.norm.weight\"", "\"model.norm.weight\\u0000 renamed\"",
         "model.safetensors: header: a key holds a NUL character (\\u0000)"},
        {"model.safetensors", "}}", "}}{\"x\":1}", "model.safetensors: header: data after the JSON value"},
        {"eval.json", "}", "}{}", "eval.json: data after the JSON value"},
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        make_model(dir, 1, 2, 2, true, NULL, NULL);
        if (!strcmp(CASES[i].file, "eval.json")) write_text(dir, "eval.json", "{\"variant\": \"base\"}");
        replace_in(dir, CASES[i].file, CASES[i].from, CASES[i].to);
        expect_load_error(dir, CASES[i].msg);
    }
    /* blanks after the value are no data: HF pads a safetensors header with spaces */
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/eval.json", dir);
    unlink(path);
    make_model(dir, 1, 2, 2, true, NULL, NULL);
    replace_in(dir, "config.json", "\"eos_token_id\":2}", "\"eos_token_id\":2}\n \t\r\n");
    attn_model m;
    attn_error err;
    if (attn_model_load(dir, &m, &err)) fail_msg("%s", err.msg);
    attn_model_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_json_rule),
    };
    return cmocka_run_group_tests(tests, make_root, remove_root);
}
