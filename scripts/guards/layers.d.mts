/** Types of scripts/guards/layers.mjs for the TypeScript tests that read the map (test/layering.test.ts). */
export declare const ALLOWED: Record<string, string[]>;
export declare const CHILD_PROCESS_ALLOWED: string[];
export declare const SPAWN_HELPERS: string[];
export declare const SPAWN_HELPERS_ALLOWED: string[];
export declare function layerOf(srcDir: string, file: string): string;
export declare function mayImport(from: string, to: string): boolean;
