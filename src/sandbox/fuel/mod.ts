/**
 * Deterministic fuel metering for core WebAssembly modules: instrument (`instrument.ts`), cache compiled metered
 * modules per digest (`cache.ts`), and read / set / classify the counter of an instance (`meter.ts`).
 * @module
 */
export { BULK_BYTES_PER_UNIT, FUEL_EXPORT, instrumentFuel, loadFuelInstrumenter, MAX_FUEL, REFILL_FIELD, REFILL_MODULE } from "./instrument.ts";
export type { InstrumentFuelOptions } from "./instrument.ts";
export {
  clearMeteredModuleCache,
  getMeteredModule,
  INSTRUMENTATION_VERSION,
  METERED_CACHE_SIZE,
  meteredModuleCacheSize,
} from "./cache.ts";
export type { MeteredModule, MeteredModuleStore } from "./cache.ts";
export { fuelError, fuelGlobal, fuelUsed, isFuelExhausted, meterError, noRefillImports, remainingFuel, setFuel, STEP_TIMEOUT_HINT, stopError } from "./meter.ts";
export { FUEL_SLICE, FuelMeter, FuelSlot, unmeteredWork } from "./fuel-meter.ts";
export type { FuelMeterOptions, MeterOutcome, StopPoint, StopReason } from "./fuel-meter.ts";
