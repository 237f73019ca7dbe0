import { DeleteFunctionCommand, ListVersionsByFunctionCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import type { FunctionVersions } from '../steps/prune-function-versions.js';

/**
 * A function's versions through the Lambda API (lambdas/steps/prune-function-versions.ts): every
 * page of ListVersionsByFunction, and DeleteFunction always with a numeric Qualifier — without one
 * DeleteFunction deletes the function and all its versions, so a qualifier that is not a version
 * number is refused here, before any call. Lambda answers ResourceConflictException for a version
 * an alias references, ResourceNotFoundException for one that is not there (API reference,
 * DeleteFunction).
 */
export function lambdaFunctionVersions(client: Pick<LambdaClient, 'send'>): FunctionVersions {
  return {
    list: async (functionArn) => {
      const versions: string[] = [];
      let Marker: string | undefined;
      do {
        const page = await client.send(new ListVersionsByFunctionCommand({ FunctionName: functionArn, ...(Marker && { Marker }) }));
        for (const { Version } of page.Versions ?? []) if (Version !== undefined) versions.push(Version);
        Marker = page.NextMarker;
      } while (Marker);
      return versions;
    },
    delete: async (functionArn, version) => {
      if (!/^\d+$/.test(version)) throw new RangeError(`only a numbered version of ${functionArn} is deleted, not ${JSON.stringify(version)}`);
      try {
        await client.send(new DeleteFunctionCommand({ FunctionName: functionArn, Qualifier: version }));
        return 'deleted';
      } catch (error) {
        if (error instanceof Error && error.name === 'ResourceConflictException') return 'refused';
        if (error instanceof Error && error.name === 'ResourceNotFoundException') return 'gone';
        throw error;
      }
    },
  };
}
