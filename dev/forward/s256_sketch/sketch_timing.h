/*
 * sketch_timing.h - the timing skeletons' host side (s256_sketch, item_sketch): a CUDA call's check
 * and the median time of a launch.
 */
#pragma once
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#define CK(x)                                                                                   \
    do {                                                                                        \
        cudaError_t e_ = (x);                                                                   \
        if (e_ != cudaSuccess) {                                                                \
            printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));           \
            exit(1);                                                                            \
        }                                                                                       \
    } while (0)

/* launch() 12 times between CUDA events: the median ms of the last 10 (2 warm-up launches) */
template <class Launch> static double sketch_median_ms(Launch launch) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<float> ms;
    for (int r = 0; r < 12; r++) {
        CK(cudaEventRecord(a));
        launch();
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float t;
        CK(cudaEventElapsedTime(&t, a, b));
        if (r >= 2) ms.push_back(t);
    }
    CK(cudaGetLastError());
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    std::sort(ms.begin(), ms.end());
    return 0.5 * (ms[4] + ms[5]);
}
