from trainers.task_trainers import ClsTrainer, LMTrainer

TRAINER_DICT = {"lm": LMTrainer, "cls": ClsTrainer}
