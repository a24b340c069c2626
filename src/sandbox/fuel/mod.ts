/**
 * Deterministic fuel metering for core WebAssembly modules: instrument (`instrument.ts`), cache compiled metered
 * modules per digest (`cache.ts`), and read / set / classify the counter of an instance (`meter.ts`).
 * @module
 */
export { FUEL_EXPORT, instrumentFuel, loadFuelInstrumenter, MAX_FUEL } from "./instrument.ts";
export type { InstrumentFuelOptions } from "./instrument.ts";
export {
  clearMeteredModuleCache,
  getMeteredModule,
  INSTRUMENTATION_VERSION,
  METERED_CACHE_SIZE,
  meteredModuleCacheSize,
  setMeteredModuleStore,
} from "./cache.ts";
export type { MeteredModule, MeteredModuleStore } from "./cache.ts";
export { fuelError, fuelGlobal, fuelUsed, isFuelExhausted, remainingFuel, setFuel } from "./meter.ts";
