/* map_file.c — musl's __map_file, as it should read, for emcc 3.1.6's libc.
 *
 * gettext (musl's dcngettext) maps a catalog with __map_file, which learns
 * the file's size through a raw fstat into musl's `struct kstat`; in Debian's
 * emcc 3.1.6 that struct is not the layout emscripten's fstat writes, so the
 * size is wrong and the first translated string reads out of bounds (the page
 * stopped at its first frame: "memory access out of bounds" in __mo_lookup).
 * This definition, linked before libc.a, takes the place of libc's: the same
 * steps through the public open, fstat and mmap. */
#include <fcntl.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

const unsigned char *__map_file(const char *pathname, size_t *size);

const unsigned char *__map_file(const char *pathname, size_t *size)
{
    int fd = open(pathname, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat st;
    void *map = MAP_FAILED;
    if (!fstat(fd, &st)) {
        map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
        *size = (size_t)st.st_size;
    }
    close(fd);
    return map == MAP_FAILED ? NULL : map;
}
