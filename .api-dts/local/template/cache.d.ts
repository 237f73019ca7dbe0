import { type CfnTemplate, type TemplateOptions } from './synthesize.js';
export interface TemplateCacheOptions {
    /**
     * The cache directory. It is trusted only when it is the current user's and nobody else can
     * write it: a template read from it is what the local engine runs (its roles and policies).
     * @default $SAVEPOINT_CACHE_DIR, else `savepoint-cache-<uid>` in the OS's temporary directory, created 0700
     */
    readonly dir?: string;
    /** Told why a cache entry or directory was not used. @default nothing */
    readonly onNote?: (note: string) => void;
}
/**
 * The synthesized template of an agent's stack, cached on disk under a key of everything it is
 * made from (templateKey): a run does not synthesize (seconds) unless that changed. The cache is
 * only a cache: a file that is not a template, or one another user could have written, is not
 * used (the template is synthesized again, and replaced only in a directory that is ours).
 */
export declare function cachedTemplate(agentName: string, options?: TemplateOptions & TemplateCacheOptions): Promise<CfnTemplate>;
/** The template cached for the agent in this copy of savepoint, when there is one that can be trusted; no synthesis. */
export declare function readCachedTemplate(agentName: string, options?: TemplateOptions & TemplateCacheOptions): CfnTemplate | undefined;
/** The file the agent's template is cached in (its variant and templateKey in the name). */
export declare function templateCacheFile(agentName: string, options?: TemplateOptions & Pick<TemplateCacheOptions, 'dir'>): string;
/**
 * State machine definitions that passed the interpreter's validation, remembered on disk by the
 * hash of their text (for LocalEngine's `validated`): validating compiles a JSON Schema, which
 * costs a new process ~150 ms and ~15 MB, and the same definition validates the same way. Also
 * keyed by the interpreter's version, so an upgrade validates again. A file that cannot be
 * written only means the next process validates again; a marker in a directory another user can
 * write, or one of theirs, is not believed.
 */
export declare function validatedDefinitions(options?: Pick<TemplateCacheOptions, 'dir'>): {
    has(text: string): boolean;
    add(text: string): void;
};
/**
 * What the synthesized template depends on besides the agent's name and variant, hashed:
 *
 *   - the sources it is made from (SOURCES), by path within this copy and content;
 *   - where this copy is: each step function's asset is hashed from its bundling options, which
 *     hold the handler's absolute path (infra/step-function.ts), and each function version's
 *     logical id from its code; so two checkouts (or installed copies) of the same sources
 *     synthesize different version ids, and must not share a template;
 *   - savepoint's version, and the CDK's as installed (aws-cdk-lib, constructs): an upgrade can
 *     change what is synthesized (logical ids, defaults) with no source changed;
 *   - the CDK context every App in the process reads from its environment (CDK_CONTEXT_JSON, or
 *     the file CONTEXT_OVERFLOW_LOCATION_ENV names): feature flags change the template.
 *
 * Not the working directory nor the agent's module: the stack is the same for every agent (only
 * its name differs, which names the entry), and its placeholder entry is a path of this copy
 * (local/template/synthesize.ts).
 */
export declare function templateKey(): string;
/** The hash of every file under SOURCES (path within this copy and content), in a fixed order. */
export declare function sourcesHash(): string;
