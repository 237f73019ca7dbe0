// A module-resolution hook for `npm run docs` (bin/docs.js registers it): TypeDoc's imports of
// `typescript` get TypeScript 6 (the devDependency `typescript-6`). TypeDoc needs the compiler's
// JavaScript API, which TypeScript 7's package (the project's compiler) does not have yet: its
// `typescript` export is only its version. package.json's `overrides` let TypeDoc's peer dependency
// be satisfied by TypeScript 7 at install time; this is where it gets the API it uses.
export async function resolve(specifier, context, next) {
  const fromTypedoc = context.parentURL?.includes('/node_modules/typedoc/') ?? false;
  if (fromTypedoc && (specifier === 'typescript' || specifier.startsWith('typescript/'))) return next(specifier.replace(/^typescript/, 'typescript-6'), context);
  return next(specifier, context);
}
