from _jitcal import load

smoke = load("sass")
