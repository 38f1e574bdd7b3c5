/**
 * The package's entry (`@cortex-sync/emulator`): what `cortex-sync emulator` needs, imported by the
 * CLI only when it runs that command, and only where this package is installed (a clone of the
 * repository: the published package does not carry it). Tests import the modules by path.
 */
export { EmulatorStartError, runEmulatorCommand, type EmulatorCommandOptions } from './cli.js';
export { MISSING_DEFINITION_MODES, type MissingDefinitionMode } from './contract.js';
export { startEmulator, type EmulatorOptions, type RunningEmulator } from './server.js';
