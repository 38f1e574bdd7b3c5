// Types of eslint.layers.js, for the test that runs its rule (test/lint/layers.test.ts).
import type { ESLint } from 'eslint';

export declare const LAYERS: Record<string, readonly string[] | '*'>;
export declare const PACKAGES: Record<string, readonly string[] | '*'>;
export declare const PUBLIC: Record<string, readonly string[]>;
export declare const EXCEPTIONS: Record<string, readonly string[]>;
export declare const layersPlugin: ESLint.Plugin;
