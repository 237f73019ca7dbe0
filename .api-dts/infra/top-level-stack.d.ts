import { Stack } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
/**
 * The deployed stack that holds `scope`, through any nested stacks: its name is known at synth
 * time (a nested stack's is not), and it is where one-per-app resources live.
 */
export declare function topLevelStack(scope: IConstruct): Stack;
