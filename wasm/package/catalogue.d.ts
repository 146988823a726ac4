// TypeScript declarations of catalogue.mjs: the kernels of kernels.wasm, as index.mjs also
// exports them.
import type { Kernel } from "./index.js";

/** Every kernel of kernels.wasm, in catalogue order. */
export declare const kernels: readonly Kernel[];
