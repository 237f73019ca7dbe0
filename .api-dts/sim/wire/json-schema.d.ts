/**
 * Why `schema` is not a usable tool input schema (a JSON Schema whose root is an object), or
 * undefined when it is. All three providers refuse other roots.
 */
export declare function toolSchemaProblem(schema: unknown): string | undefined;
