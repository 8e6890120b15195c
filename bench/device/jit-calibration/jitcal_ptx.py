from _jitcal import load

smoke = load("ptx")
