/* suggest.c - "did you mean" (suggest.h): restricted Damerau-Levenshtein distance, case folded. */
#include "suggest.h"

#include <ctype.h>
#include <string.h>

int suggest_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > SUGGEST_MAX_LEN || lb > SUGGEST_MAX_LEN) return 1 << 20;
    /* d[i][j]: distance between the first i letters of a and the first j of b */
    int d[SUGGEST_MAX_LEN + 1][SUGGEST_MAX_LEN + 1];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
            int best = d[i - 1][j - 1] + (ca != cb);
            if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == cb && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[la][lb];
}

const char *suggest_closest(const char *s, const char *const *names, int n)
{
    const char *best = NULL;
    int best_d = 1 + (int)strlen(s) / 4 + 1;
    for (int i = 0; i < n; i++) {
        int dist = suggest_distance(s, names[i]);
        if (dist < best_d) {
            best = names[i];
            best_d = dist;
        }
    }
    return best;
}
