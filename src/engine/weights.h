/* weights.h - device upload of a shard: every shard tensor gets a device range, filled from the
 * file through the staging buffer (Q8_0/Q4_0 repacked while they stream) or, for built-in
 * models, made on the GPU by the winit kernel from the seed. A fused [gate | up] stack
 * (ffn_gate_up) is stored as its two halves, each in the device layout (weights_part). */
#ifndef LFM2_WEIGHTS_H
#define LFM2_WEIGHTS_H

#include "gpu.h"
#include "kernels.h"
#include "model.h"

struct dev_weights {
    struct gpu_weight *w; /* one per shard tensor, same index as shard.t */
    int n;
    uint64_t bytes;       /* device bytes of all weights */
    double upload_ms;
};

/* Uploads (or makes) every tensor of the shard. progress: report progress on stderr (progress.h). */
int weights_upload(struct gpu *g, const struct shard *s, uint64_t seed, bool progress, struct dev_weights *out,
                   struct err *e);
void weights_free(struct dev_weights *w);
/* The device weight of layer l, role r (NULL when absent). */
const struct gpu_weight *weights_layer(const struct dev_weights *w, const struct shard *s, int l, enum wrole r);
/* Part `part` of n_parts equal row blocks of a weight, as a weight of its own. Valid for every
 * weight stored in parts (a fused [gate | up] stack: ffn_gate_up, two parts) and, for F32/F16/BF16,
 * for any weight whose rows split evenly. */
struct gpu_weight weights_part(const struct gpu_weight *w, int part, int n_parts);
const struct gpu_weight *weights_global(const struct dev_weights *w, const struct shard *s, enum grole r);

#endif
