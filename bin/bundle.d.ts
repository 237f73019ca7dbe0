// Types of bin/bundle.js (plain JavaScript: it runs before anything compiles TypeScript).
export declare const ROOT: string;
export declare const ENTRIES: { cli: string; savepoint: string; 'savepoint/sim': string; 'savepoint/client': string };
/** Packages the CLI bundle holds as entries of their own (`packages/<name>.js`), when installed beside the sources. */
export declare const BUNDLED_PACKAGES: readonly string[];
/** Packages bundled into the CLI bundle's own code (not shared with an agent), when installed beside the sources. */
export declare const INLINED_PACKAGES: readonly string[];
/** CommonJS packages whose named function exports (and classes, `new <name>`) the CLI bundle loads at their first call. */
export declare const LAZY_EXPORTS: Readonly<Record<string, readonly string[]>>;
export interface CliBundle {
  dir: string;
  /** Each entry's file; and each of BUNDLED_PACKAGES the bundle holds, by its name. */
  entries: Record<keyof typeof ENTRIES, string> & Partial<Record<string, string>>;
}
export declare function defaultCacheDir(root?: string): string;
export declare function cliBundle(options?: { root?: string; cacheDir?: string }): Promise<CliBundle>;
export declare function agentBundle(modulePath: string, cli: CliBundle, options?: { root?: string }): Promise<string>;
export declare function isIntact(dir: string): boolean;
