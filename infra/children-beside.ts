/**
 * App context the local twin sets when it synthesizes one agent alone, whose `children` run on
 * engines of their own beside it (local/template/synthesize.ts): they are not agents of that
 * stack, and `DurableAgent` does not check that they are. A module of its own, without the CDK:
 * the local engine reads it before it loads the CDK.
 */
export const CHILDREN_BESIDE_CONTEXT = '@savepoint/children-beside';
