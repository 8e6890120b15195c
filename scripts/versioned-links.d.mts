/** Types of scripts/versioned-links.mjs for the TypeScript test that runs its check (test/docs-links.test.ts). */
export interface Manifest {
  version: string;
  repository: string;
  files: string[];
}
export interface BrokenLink {
  file: string;
  link: string;
  expected?: string;
  problem: string;
}
export declare function manifest(root?: string): Manifest;
export declare function shipped(path: string, files: string[]): boolean;
export declare function shippedMarkdown(root?: string): string[];
export declare function versionedUrl(path: string, info: Manifest, root?: string): string;
export declare function brokenLinks(file: string, text: string, root?: string): BrokenLink[];
export declare function fixLinks(file: string, text: string, root?: string): string;
